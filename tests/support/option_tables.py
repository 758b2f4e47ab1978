"""Every format's option declaration and parser, for the tests that sweep all of them.

Each entry names what a use needs besides the options under test (a path, a connection string)
and the schema Spark would hand over, so a sweep can call exactly what the data source calls.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql.types import LongType, StringType, StructField, StructType

from pysparksources._core.option_table import OptionTable, Use
from pysparksources.eventhubs import options as eventhubs_options
from pysparksources.eventhubs._option_table import TABLE as EVENTHUBS
from pysparksources.files import options as files_options
from pysparksources.files._option_table import TABLE as FILES
from pysparksources.rate import options as rate_options
from pysparksources.rate._option_table import TABLE as RATE

__all__ = ["EH_CONNECTION", "FORMATS", "USES", "Format"]

EH_CONNECTION = "Endpoint=sb://h/;SharedAccessKeyName=n;SharedAccessKey=k;EntityPath=e"
# Each use Spark hands options to, including the schema() call where it is unknown which read.
USES = (Use.READ, Use.STREAM_READ, Use.BATCH_READ, Use.STREAM_WRITE, Use.BATCH_WRITE)


@dataclass(frozen=True)
class Format:
    table: OptionTable
    parse: Callable[[Mapping[str, str], Use, Any], Any]
    base: dict[Use, dict[str, str]] = field(default_factory=dict)  # required options per use
    schema: dict[Use, StructType] = field(default_factory=dict)

    def uses(self) -> list[Use]:
        """The uses this format serves (pyrate has no writers)."""
        return [use for use in USES if self.table.for_use(use)]

    def call(self, raw: Mapping[str, str], use: Use) -> Any:
        """Parse ``raw`` for ``use`` as the data source would, with what the use requires."""
        base = next((v for k, v in self.base.items() if k & use), {})
        return self.parse({**base, **raw}, use, self.schema.get(use))


_FILE_SINK = StructType([StructField("a", StringType()), StructField("b", LongType())])
_EH_SINK = StructType([StructField("body", StringType())])

FORMATS: dict[str, Format] = {
    "pyrate": Format(RATE, rate_options.parse_options),
    "pyfile": Format(
        FILES,
        files_options.parse_options,
        base={
            Use.READ: {"path": "/tmp/fuzz-in", "sourceLogLocation": "/tmp/fuzz-log"},
            Use.WRITE: {"path": "memory://fuzz/out"},
        },
        schema={Use.STREAM_WRITE: _FILE_SINK, Use.BATCH_WRITE: _FILE_SINK},
    ),
    "pyeventhub": Format(
        EVENTHUBS,
        eventhubs_options.parse_options,
        base={Use.ANY: {"connectionString": EH_CONNECTION}},
        schema={Use.STREAM_WRITE: _EH_SINK, Use.BATCH_WRITE: _EH_SINK},
    ),
}
