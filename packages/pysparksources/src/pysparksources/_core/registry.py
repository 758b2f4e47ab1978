"""Short source names mapped to lazily imported data source classes.

Importing a source's module can pull optional dependencies (the Azure SDK for Event Hubs), so
the registry keeps ``"module:Class"`` strings and imports only what is asked for, with a hint
naming the extra to install when an import fails. ``tests/core/test_datasource_targets.py``
imports every one.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from pysparksources._core.install_hint import pip_install
from pysparksources.errors import ArgumentError, UnsupportedSparkError

__all__ = ["SOURCES", "SourceEntry", "load_source"]


@dataclass(frozen=True)
class SourceEntry:
    name: str
    target: str
    extra: str | None = None


SOURCES: dict[str, SourceEntry] = {
    entry.name: entry
    for entry in (
        SourceEntry("pyrate", "pysparksources.rate.datasource:RateDataSource"),
        SourceEntry("pyfile", "pysparksources.files.datasource:FileDataSource"),
        SourceEntry(
            "pyeventhub", "pysparksources.eventhubs.datasource:EventHubDataSource", "eventhubs"
        ),
    )
}


def load_source(name: str) -> type:
    """Import and return the DataSource class registered under ``name``."""
    try:
        entry = SOURCES[name]
    except KeyError:
        raise ArgumentError(
            "pysparksources.register",
            f"unknown pysparksources source {name!r}; available: {', '.join(sorted(SOURCES))}",
        ) from None
    module_name, _, class_name = entry.target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except UnsupportedSparkError as exc:  # the Spark version, which no extra changes
        raise exc.bare() from None
    except ImportError as exc:
        extra = "spark" if (exc.name or "").partition(".")[0] == "pyspark" else entry.extra
        hint = f" (install it with: {pip_install(extra=extra)})" if extra else ""
        raise ImportError(f"source {name!r} needs a missing dependency: {exc}{hint}") from exc
    cls: type = getattr(module, class_name)
    return cls
