"""Adding an option is three edits: its declaration, its config field, the code that uses it.

The option tables are gathered from the ``_option_table`` modules (and pyfile's format modules),
and 1:1 options are copied into the configs by ``Options.fill``. These static checks read those
modules and the parsers, so a declaration the table would miss, a ``config_field`` that names no
field of a config the parser fills (or one of another type), or a config field that nothing
fills fails here, naming it, without a Spark session.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pysparksources._core.option_table import Option, OptionTable, Use, declared_in
from pysparksources.eventhubs import _body_format, _store_options
from pysparksources.eventhubs import _option_table as eventhubs_table
from pysparksources.eventhubs import options as eventhubs_parser
from pysparksources.files import _option_table as files_table
from pysparksources.files import options as files_parser
from pysparksources.files.formats import FORMATS
from pysparksources.rate import _option_table as rate_table
from pysparksources.rate import options as rate_parser

# source -> (its declaration module, the parser modules that build its configs)
SOURCES: dict[str, tuple[types.ModuleType, tuple[types.ModuleType, ...]]] = {
    "pyrate": (rate_table, (rate_parser,)),
    "pyfile": (files_table, (files_parser,)),
    "pyeventhub": (eventhubs_table, (eventhubs_parser, _body_format, _store_options)),
}
_SINGLE_USES = (Use.STREAM_READ, Use.BATCH_READ, Use.STREAM_WRITE, Use.BATCH_WRITE)


def _tree(module: types.ModuleType) -> ast.Module:
    return ast.parse(Path(inspect.getfile(module)).read_text(encoding="utf-8"))


def _is_option_class(module: types.ModuleType, node: ast.expr) -> bool:
    found = getattr(module, node.id, None) if isinstance(node, ast.Name) else None
    return isinstance(found, type) and issubclass(found, Option)


def _declarations(module: types.ModuleType) -> list[str]:
    """The names a module binds to an option it declares, in the order of its text; fails on
    a declaration not bound to a module-level name (the table could not find it)."""
    tree = _tree(module)
    bound = [
        node
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and _is_option_class(module, node.value.func)
    ]
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and _is_option_class(module, node.func)
    ]
    loose = sorted({call.lineno for call in calls} - {node.lineno for node in bound})
    assert not loose, f"{module.__name__}: options declared outside a module-level name: {loose}"
    names = []
    for node in bound:
        (target,) = node.targets
        assert isinstance(target, ast.Name), ast.unparse(node)
        names.append(target.id)
    return names


def _format_modules() -> list[types.ModuleType]:
    import sys

    return [sys.modules[type(fmt).__module__] for fmt in FORMATS]


def test_every_option_a_module_declares_is_in_its_table_in_the_order_written() -> None:
    # The documentation's tables list a use's options in the table's order: the order of the
    # declarations in the file, whatever else the module holds or imports.
    for module in (rate_table, eventhubs_table):
        declared = [getattr(module, name) for name in _declarations(module)]
        assert list(module.TABLE.options) == declared, module.__name__
        # vars() after the import also holds what a module binds after its TABLE line
        assert declared_in(vars(module), Option) == module.TABLE.options, module.__name__
    own = [getattr(files_table, name) for name in _declarations(files_table)]
    assert declared_in(vars(files_table), Option) == tuple(own)
    formats = []
    for fmt, module in zip(FORMATS, _format_modules(), strict=True):
        of_format = [getattr(module, name) for name in _declarations(module)]
        assert list(fmt.declared_options) == of_format, fmt.name
        formats += of_format
    assert list(files_table.TABLE.options) == own + formats
    assert files_table.TABLE.families == (files_table.FS, files_table.QUEUE)


def test_a_declaration_after_the_table_or_inside_a_tuple_would_fail_here(tmp_path: Path) -> None:
    # What the check above catches, shown on a module written to do both wrong.
    module = types.ModuleType("late_options")
    module.__file__ = str(tmp_path / "late_options.py")
    Path(module.__file__).write_text(
        "from pysparksources._core.option_table import Flag, OptionTable\n"
        "EARLY = Flag(name='early', doc='d')\n"
        "TABLE = OptionTable.declared('src', globals())\n"
        "LATE = Flag(name='late', doc='d')\n"
    )
    exec(compile(Path(module.__file__).read_text(), module.__file__, "exec"), vars(module))
    assert [o.name for o in module.TABLE.options] == ["early"]
    assert [o.name for o in declared_in(vars(module), Option)] == ["early", "late"]
    Path(module.__file__).write_text(
        "from pysparksources._core.option_table import Flag\n"
        "PAIR = (Flag(name='a', doc='d'), Flag(name='b', doc='d'))\n"
    )
    exec(compile(Path(module.__file__).read_text(), module.__file__, "exec"), vars(module))
    with pytest.raises(AssertionError, match=r"declared outside a module-level name: \[2\]"):
        _declarations(module)


# -- 1:1 options and the configs they fill --------------------------------------------------
def _fill_calls(module: types.ModuleType) -> Iterator[tuple[type[Any], set[str], int]]:
    """Each ``opts.fill(Config, name=...)`` of a parser: the config and the fields it gives."""
    for node in ast.walk(_tree(module)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "fill"
        ):
            assert node.args and isinstance(node.args[0], ast.Name), ast.unparse(node)
            assert all(k.arg is not None for k in node.keywords), "no **kwargs: " + ast.unparse(
                node
            )
            config = getattr(module, node.args[0].id)
            yield config, {str(k.arg) for k in node.keywords}, node.lineno


def _filled_configs(parsers: tuple[types.ModuleType, ...]) -> dict[str, type[Any]]:
    return {config.__name__: config for m in parsers for config, _, _ in _fill_calls(m)}


def _value_type(option: Option[Any]) -> Any:
    """``T`` of the ``Option[T]`` the option's class derives from."""
    for klass in type(option).__mro__:
        for base in getattr(klass, "__orig_bases__", ()):
            if typing.get_origin(base) is Option:
                return typing.get_args(base)[0]
    raise AssertionError(f"{type(option).__name__} does not derive from Option[T]")


def _members(annotation: Any) -> tuple[Any, ...]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return (annotation,)


def _may_be_none(option: Option[Any]) -> bool:
    """No default for one of the option's uses: unset, the value is None."""
    return any(option.default_text(use) is None for use in _SINGLE_USES if use & option.uses)


def _mismatch(option: Option[Any], config: type[Any], field_name: str) -> str | None:
    if field_name not in {f.name for f in dataclasses.fields(config)}:
        return f"{config.__name__} has no field {field_name}"
    annotation = typing.get_type_hints(config)[field_name]
    where = f"{config.__name__}.{field_name} is {annotation}"
    if _value_type(option) not in _members(annotation):
        return f"{where}, the option gives {_value_type(option)}"
    if _may_be_none(option) and type(None) not in _members(annotation):
        return f"{where}, the option may be unset"
    return None


@pytest.mark.parametrize("source", SOURCES)
def test_every_one_to_one_option_names_a_filled_config_field_of_its_type(source: str) -> None:
    module, parsers = SOURCES[source]
    table: OptionTable = module.TABLE
    configs = _filled_configs(parsers)
    one_to_one = [option for option in table.options if option.config_field is not None]
    assert one_to_one, source
    problems = []
    for option in one_to_one:
        config_name, _, field_name = str(option.config_field).partition(".")
        config = configs.get(config_name)
        if config is None:
            problems.append(
                f"{option.name}: no parser fills {config_name} (filled: {sorted(configs)})"
            )
            continue
        mismatch = _mismatch(option, config, field_name)
        if mismatch is not None:
            problems.append(f"{option.name}: {mismatch}")
    assert not problems, problems


@pytest.mark.parametrize("source", SOURCES)
def test_every_field_of_a_filled_config_is_filled_once(source: str) -> None:
    module, parsers = SOURCES[source]
    table: OptionTable = module.TABLE
    problems = []
    for parser in parsers:
        for config, given, line in _fill_calls(parser):
            where = f"{parser.__name__}:{line} fill({config.__name__})"
            fields = {f.name for f in dataclasses.fields(config) if f.init}
            by_option = {
                name
                for name in fields
                if any(o.config_field == f"{config.__name__}.{name}" for o in table.options)
            }
            if given - fields:
                problems.append(f"{where}: no field {sorted(given - fields)}")
            if given & by_option:
                problems.append(
                    f"{where}: given and filled by an option: {sorted(given & by_option)}"
                )
            if fields - given - by_option:
                problems.append(f"{where}: nothing fills {sorted(fields - given - by_option)}")
    assert not problems, problems


def test_the_type_check_refuses_a_field_of_another_type_or_not_nullable() -> None:
    @dataclasses.dataclass(frozen=True)
    class Config:
        count: int
        maybe_count: int | None
        name: str

    from pysparksources._core.option_table import Integer

    unset = Integer(name="n", doc="d", config_field="Config.count")
    assert _mismatch(unset, Config, "maybe_count") is None
    assert "may be unset" in str(_mismatch(unset, Config, "count"))
    defaulted = Integer(name="n", doc="d", default="1", config_field="Config.count")
    assert _mismatch(defaulted, Config, "count") is None
    assert "the option gives <class 'int'>" in str(_mismatch(defaulted, Config, "name"))
    assert "has no field" in str(_mismatch(defaulted, Config, "cuont"))
