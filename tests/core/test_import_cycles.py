"""The no_cycles contract type (lint/import_cycles.py, run by ./dev lint through .importlinter):
it finds a cycle through a package's ``__init__``, which ``acyclic_siblings`` cannot see, names
the modules and the lines, and passes a graph without one."""

from __future__ import annotations

import grimp
from importlinter import ContractCheck

from lint.import_cycles import NoCyclesContract


def check(imports: list[tuple[str, str]], *packages: str) -> ContractCheck:
    graph = grimp.ImportGraph()
    for module in ("a", "a.b", "a.b.c", "a.d", "e", "e.f"):
        graph.add_module(module)
    for line, (importer, imported) in enumerate(imports, start=1):
        graph.add_import(
            importer=importer,
            imported=imported,
            line_number=line,
            line_contents=f"import {imported}",
        )
    contract = NoCyclesContract(
        name="no cycles", session_options={}, contract_options={"packages": list(packages)}
    )
    return contract.check(graph, verbose=False)


def test_a_package_and_its_own_submodule_are_a_cycle() -> None:
    result = check([("a", "a.b.c"), ("a.b.c", "a"), ("a.d", "a.b")], "a")
    assert not result.kept
    assert result.metadata["groups"] == [
        (["a", "a.b.c"], ["a -> a.b.c (l.1: import a.b.c)", "a.b.c -> a (l.2: import a)"])
    ]


def test_each_group_is_named_whole_with_one_shortest_cycle() -> None:
    # a -> a.b -> a.d -> a and a -> a.d -> a: one group of three, the cycle of two is shown;
    # e and e.f import each other in a group of their own.
    imports = [("a", "a.b"), ("a.b", "a.d"), ("a.d", "a"), ("a", "a.d"), ("e", "e.f"), ("e.f", "e")]
    result = check(imports, "a", "e")
    assert not result.kept
    assert result.metadata["groups"] == [
        (["a", "a.b", "a.d"], ["a -> a.d (l.4: import a.d)", "a.d -> a (l.3: import a)"]),
        (["e", "e.f"], ["e -> e.f (l.5: import e.f)", "e.f -> e (l.6: import e)"]),
    ]


def test_only_the_named_packages_are_checked() -> None:
    result = check([("e", "e.f"), ("e.f", "e"), ("a", "e")], "a")
    assert result.kept and result.metadata["groups"] == []


def test_imports_without_a_cycle_keep_the_contract() -> None:
    # A package importing its submodules, which import each other one way, and other packages.
    imports = [("a", "a.b"), ("a", "a.d"), ("a.b", "a.b.c"), ("a.d", "a.b.c"), ("a.d", "e.f")]
    result = check(imports, "a", "e")
    assert result.kept and result.metadata["groups"] == []
