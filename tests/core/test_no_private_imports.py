"""The product and the emulator import no private module of another package.

A module whose name (or a package on its path) starts with ``_`` is an implementation detail
its package may change in any release: ``azure.eventhub._pyamqp``,
``azure.eventhub._transport._pyamqp_transport``. Static: every ``import``/``from ... import``
(also those inside functions) and every ``importlib.import_module``/``__import__`` of a
constant name, read from the source with :mod:`ast`; our own packages' private modules are ours.
"""

from __future__ import annotations

import ast

from support.paths import EMULATOR, PRODUCT

SOURCE_ROOTS = (PRODUCT / "src", EMULATOR / "src")


def _own_names() -> set[str]:
    """Top-level packages and modules our distributions install."""
    names = set()
    for root in SOURCE_ROOTS:
        for entry in root.iterdir():
            if entry.is_dir() and (entry / "__init__.py").exists():
                names.add(entry.name)
            elif entry.suffix == ".py":
                names.add(entry.stem)
    return names


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def private_imports(source: str, own: set[str]) -> list[str]:
    """Each import of a private module of a package not in ``own``, as ``line: module``."""
    found = []

    def check(line: int, module: str, names: tuple[str, ...] = ()) -> None:
        top, *rest = module.split(".")
        if top in own:
            return
        if any(_private(part) for part in rest) or any(_private(name) for name in names):
            found.append(f"{line}: {'.'.join((module, *names)) if names else module}")

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                check(node.lineno, alias.name)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:  # ``from x import _y``: a private module or name of x
                check(node.lineno, node.module, (alias.name,))
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0]
            constant = first.value if isinstance(first, ast.Constant) else None
            if name in {"import_module", "__import__"} and isinstance(constant, str):
                check(node.lineno, constant)
    return sorted(found, key=lambda entry: int(entry.split(":")[0]))


def test_no_module_imports_a_private_module_of_another_package() -> None:
    own = _own_names()
    assert {"pysparksources", "pysparksources_emulator"} <= own
    offenders = {}
    files = [path for root in SOURCE_ROOTS for path in sorted(root.rglob("*.py"))]
    assert len(files) > 50, f"only {len(files)} modules found under {SOURCE_ROOTS}"
    for path in files:
        found = private_imports(path.read_text(encoding="utf-8"), own)
        if found:
            offenders[str(path.relative_to(PRODUCT.parent.parent))] = found
    assert not offenders, (
        f"private modules of other packages imported (use their public API): {offenders}"
    )


def test_the_check_sees_every_form_of_a_private_import() -> None:
    # The imports an earlier pyeventhub made of azure-eventhub's internals, as it wrote them
    # (inside functions), and the other spellings of the same thing.
    source = """
def transport():
    from azure.eventhub._transport._pyamqp_transport import PyamqpTransport
    from azure.eventhub._pyamqp.error import AMQPConnectionError, AMQPLinkError
    import azure.eventhub._pyamqp as pyamqp
    from azure.eventhub import _pyamqp
    importlib.import_module("azure.eventhub._consumer")
    from azure.eventhub.exceptions import ConnectError
    from pysparksources.eventhubs._refusals import refusal
    from . import _connection
    from __future__ import annotations
"""
    assert private_imports(source, {"pysparksources"}) == [
        "3: azure.eventhub._transport._pyamqp_transport.PyamqpTransport",
        "4: azure.eventhub._pyamqp.error.AMQPConnectionError",
        "4: azure.eventhub._pyamqp.error.AMQPLinkError",
        "5: azure.eventhub._pyamqp",
        "6: azure.eventhub._pyamqp",
        "7: azure.eventhub._consumer",
    ]
