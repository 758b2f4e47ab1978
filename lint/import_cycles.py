"""An import-linter contract type: no import cycle at all among the modules of some packages.

import-linter's ``acyclic_siblings`` compares sibling packages only, so it cannot see a cycle
that runs through a package's ``__init__`` (``pkg`` imports ``pkg._core.mod``, which imports
``pkg`` back, say for its version). This contract looks at the module graph
itself: every direct import counts, lazy ones inside functions and ``TYPE_CHECKING`` ones
included, and a package is just another module. It reports one shortest cycle per group of
modules that import each other, with the lines that make it.
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from itertools import pairwise

import grimp
from importlinter import Contract, ContractCheck, fields, output

__all__ = ["NoCyclesContract"]


def _strongly_connected(graph: grimp.ImportGraph, modules: Set[str]) -> list[set[str]]:
    """The groups of two or more modules that import each other (Tarjan's algorithm, without
    recursion: a deep package would exceed Python's recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []
    for root in sorted(modules):
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root) & modules)))]
        while work:
            module, imported = work[-1]
            step = next(imported, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    successors = graph.find_modules_directly_imported_by(step) & modules
                    work.append((step, iter(sorted(successors))))
                elif step in on_stack:
                    low[module] = min(low[module], index[step])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == module:
                        break
                if len(group) > 1:
                    groups.append(group)
    return groups


def _shortest_cycle(graph: grimp.ImportGraph, group: Set[str]) -> tuple[str, ...]:
    """A shortest cycle through the group's first module (by name): that module, the modules it
    imports in turn, and that module again."""
    first = min(group)
    best: tuple[str, ...] | None = None
    for imported in sorted(graph.find_modules_directly_imported_by(first) & group):
        back = graph.find_shortest_chain(importer=imported, imported=first)
        if back is not None and (best is None or len(back) + 1 < len(best)):
            best = (first, *back)
    if best is None:  # cannot happen for a strongly connected group; say so rather than hide it
        raise RuntimeError(f"no cycle found through {first} in {sorted(group)}")
    return best


def _groups(graph: grimp.ImportGraph, packages: Iterable[str]) -> list[set[str]]:
    """The groups of modules under ``packages`` that import each other, by first name."""
    modules: set[str] = set()
    for package in packages:
        modules |= {package, *graph.find_descendants(package)}
    return sorted(_strongly_connected(graph, modules), key=min)


def _where(graph: grimp.ImportGraph, importer: str, imported: str) -> str:
    """``importer -> imported (l.N: the line)`` for the first line that makes the import."""
    details = graph.get_import_details(importer=importer, imported=imported)
    if not details:
        return f"{importer} -> {imported}"
    first = min(details, key=lambda detail: detail["line_number"])
    return f"{importer} -> {imported} (l.{first['line_number']}: {first['line_contents']})"


class NoCyclesContract(Contract):
    """``type = no_cycles``; ``packages``: the packages whose modules must form no cycle."""

    type_name = "no_cycles"

    packages = fields.ListField(subfield=fields.StringField())

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        packages: list[str] = self.packages  # type: ignore[assignment]
        found = []
        for group in _groups(graph, packages):
            cycle = _shortest_cycle(graph, group)
            found.append((sorted(group), [_where(graph, *step) for step in pairwise(cycle)]))
        return ContractCheck(kept=not found, metadata={"groups": found})

    def render_broken_contract(self, check: ContractCheck) -> None:
        groups: list[tuple[list[str], list[str]]] = check.metadata["groups"]
        for members, steps in groups:
            output.print_error(f"{', '.join(members)} import each other; one cycle:", bold=True)
            output.new_line()
            for step in steps:
                output.indent_cursor()
                output.print(step)
            output.new_line()
