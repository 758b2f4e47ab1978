"""A data source whose only job is to be resolved by Spark in a Python worker.

Its class is pickled by reference, so the worker must import pysparksources to resolve it; the
schema's one column is named after the version that worker imported.
"""

from __future__ import annotations

from pyspark.sql.datasource import DataSource

from pysparksources._version import __version__


class ImportProbe(DataSource):
    @classmethod
    def name(cls) -> str:
        return "pysparksources_import_probe"

    def schema(self) -> str:
        return f"`{__version__}` STRING"
