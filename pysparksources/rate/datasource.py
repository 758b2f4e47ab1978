"""The ``pyrate`` data source: options are checked here, when the query is defined.

This module imports only PySpark and the standard library so the ``pyspark_pyrate``
auto-registration shim stays import-light; the readers (NumPy, Arrow) load on demand.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql.datasource import DataSource

from pysparksources._options import OptionError
from pysparksources.rate.options import RateConfig, parse_rate_options

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

    from pysparksources.rate.reader import RateBatchReader, RateStreamReader

__all__ = ["RATE_SCHEMA", "RateDataSource"]

RATE_SCHEMA = "timestamp TIMESTAMP, value BIGINT"


class RateDataSource(DataSource):  # type: ignore[misc]
    """Spark's ``rate`` (time mode) and ``rate-micro-batch`` (``rowsPerBatch``) in one source.

    Adds admission control (``maxRowsPerTrigger``), Trigger.AvailableNow in several batches,
    finite streams (``totalRows``) and batch reads.
    """

    def __init__(self, options: dict[str, str]) -> None:
        super().__init__(options)
        try:
            self.config: RateConfig = parse_rate_options(options)
        except OptionError as error:
            # Raised from here alone, so Spark's message shows one frame and our sentence.
            raise error.bare() from None

    @classmethod
    def name(cls) -> str:
        return "pyrate"

    def schema(self) -> str:
        return RATE_SCHEMA

    def streamReader(self, schema: StructType) -> RateStreamReader:
        from pysparksources.rate.reader import RateStreamReader

        return RateStreamReader(self.config)

    def reader(self, schema: StructType) -> RateBatchReader:
        from pysparksources.rate.reader import RateBatchReader

        if self.config.total_rows is None:
            error = OptionError.required(
                "pyrate",
                "totalRows",
                "batch reads (spark.read) need an integer >= 1 saying how many rows to produce",
            )
            raise error.bare() from None
        return RateBatchReader(self.config)
