"""Every ``"module:name"`` string the data sources name resolves, to the right kind of thing.

The data sources (``_core/datasource.py``) and the registry (``_core/registry.py``) name their
parser, readers, writers and classes as strings: the ``pyspark_*`` shims must import only
PySpark and the standard library, and the parsers only on the driver (``.importlinter``'s
``parser-on-the-driver``), so no module imports them. A typo there would surface only when a
user first asks for that use; this test imports each target instead.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import pytest
from pyspark.sql.datasource import (
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)

import pysparksources
from pysparksources._core.datasource import SourceDataSource, _load
from pysparksources._core.registry import SOURCES, load_source

# Where a data source's strings point, and what each must be.
KINDS: dict[str, type] = {
    "STREAM_READER": DataSourceStreamReader,
    "BATCH_READER": DataSourceReader,
    "STREAM_WRITER": DataSourceStreamWriter,
    "BATCH_WRITER": DataSourceWriter,
}
# The test sources that subclass pyfile's to pause or crash (tests/support): their strings too.
SUPPORT = ["support.evolution_hooks", "support.notification_hooks", "support.crash_hooks"]


def _data_sources() -> list[type[SourceDataSource]]:
    found: list[type[SourceDataSource]] = [load_source(name) for name in SOURCES]
    for module_name in SUPPORT:
        module = importlib.import_module(module_name)
        found += [
            cls
            for cls in vars(module).values()
            if inspect.isclass(cls)
            and issubclass(cls, SourceDataSource)
            and cls.__module__ == module_name
        ]
    return found


def test_the_registry_and_the_shims_name_the_same_classes() -> None:
    assert sorted(SOURCES) == sorted(pysparksources.source_names())
    for name, entry in SOURCES.items():
        cls = load_source(name)
        assert issubclass(cls, SourceDataSource) and cls.name() == cls.NAME == name, entry
        shim = importlib.import_module(f"pyspark_{name}")
        assert shim.DefaultSource is cls


@pytest.mark.parametrize("source", _data_sources(), ids=lambda cls: cls.name())
def test_every_target_of_a_data_source_resolves_to_its_kind(source: Any) -> None:
    parse = _load(source.PARSE)
    assert list(inspect.signature(parse).parameters)[:3] == ["raw", "use", "schema"], parse
    read_schema = _load(source.READ_SCHEMA)
    assert len(inspect.signature(read_schema).parameters) == 1, read_schema
    named = 0
    for attribute, kind in KINDS.items():
        target = getattr(source, attribute)
        if target is None:  # the source does not support that use (pyrate writes nothing)
            continue
        resolved = _load(target)
        assert inspect.isclass(resolved) and issubclass(resolved, kind), (attribute, target)
        named += 1
    assert named >= 2, f"{source.name()} names fewer than a stream and a batch reader"
