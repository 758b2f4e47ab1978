"""Differences between pyfile and Spark's file source and sink that the documentation lists.

Each rule is checked, not just named: a cell counts as "differs (documented)" only when every
differing value obeys the rule (or pyfile's error matches it); anything else fails the suite.
The keys appear in the "Where pyfile differs" sections of docs/pyfile-source.md and
docs/pyfile-sink.md and in docs/conformance.md.
"""

from __future__ import annotations

from typing import Any

from harness import Documented

TEXT_FORMATS = frozenset({"csv", "json"})
# Columns holding timestamps (as microseconds in the comparison), at any depth.
TIMESTAMP_COLUMNS = frozenset({"c_ts", "c_ntz", "c_struct", "c_nested"})
TIMESTAMP_ONLY = frozenset({"c_ts", "c_ntz"})


def _floor_ms(spark: Any, pyfile: Any) -> bool:
    """Spark's value is pyfile's with every timestamp cut to milliseconds (walked in parallel)."""
    if isinstance(spark, int) and isinstance(pyfile, int) and not isinstance(spark, bool):
        return spark in (pyfile, pyfile // 1000 * 1000)
    if isinstance(spark, dict) and isinstance(pyfile, dict):
        return spark.keys() == pyfile.keys() and all(_floor_ms(spark[k], pyfile[k]) for k in spark)
    if isinstance(spark, (list, tuple)) and isinstance(pyfile, (list, tuple)):
        return len(spark) == len(pyfile) and all(map(_floor_ms, spark, pyfile))
    return bool(spark == pyfile)


_JAVA_WHITESPACE = "".join(chr(c) for c in range(33))


def _trimmed(spark: Any, pyfile: Any) -> bool:
    """Spark's csv writer trims leading and trailing whitespace; "" then reads back as null."""
    return isinstance(pyfile, str) and spark == (pyfile.strip(_JAVA_WHITESPACE) or None)


DOCUMENTED: list[Documented] = [
    Documented(
        key="micros-in-text",
        summary=(
            "csv/json: pyfile writes timestamps with microseconds; Spark's writers keep "
            "milliseconds (yyyy-MM-dd'T'HH:mm:ss.SSSXXX), so Spark's own files lose them"
        ),
        columns=TIMESTAMP_COLUMNS,
        formats=TEXT_FORMATS,
        directions=frozenset({"write"}),
        holds=_floor_ms,
    ),
    Documented(
        key="csv-edge-spaces",
        summary=(
            "csv: pyfile's writer keeps leading and trailing spaces (it quotes such values); "
            "Spark's writer trims them (ignoreLeadingWhiteSpace/ignoreTrailingWhiteSpace "
            "default to true on write), and a value trimmed to nothing reads back as null"
        ),
        columns=frozenset({"c_string"}),
        formats=frozenset({"csv"}),
        directions=frozenset({"write"}),
        holds=_trimmed,
    ),
    Documented(
        key="no-orc-sink",
        summary="the sink writes parquet, csv, json, text and avro; format orc is refused at start",
        columns=frozenset(
            {
                "c_byte",
                "c_short",
                "c_int",
                "c_long",
                "c_float",
                "c_double",
                "c_dec9",
                "c_dec38",
                "c_string",
                "c_binary",
                "c_bool",
                "c_date",
                "c_ts",
                "c_ntz",
                "c_array",
                "c_map",
                "c_struct",
                "c_nested",
            }
        ),
        formats=frozenset({"orc"}),
        directions=frozenset({"write"}),
        error=r"invalid value 'orc' for option 'format': expected one of parquet, csv, json, text",
    ),
    Documented(
        key="orc-nanosecond-range",
        summary=(
            "orc: pyarrow reads ORC timestamps as nanoseconds, so a file holding an instant "
            "outside 1677-09-21..2262-04-11 fails with an error naming the file (Spark reads "
            "years 1-9999); within that range timestamps are read exactly"
        ),
        columns=TIMESTAMP_COLUMNS,
        formats=frozenset({"orc"}),
        directions=frozenset({"read"}),
        error=r"cannot read orc file .*out of range for nanosecond resolution",
    ),
    Documented(
        key="partition-types",
        summary=(
            "the sink's partitionBy takes string, integer, boolean and date columns; a "
            "timestamp (or float, decimal, binary) partition column is refused at start "
            "(Spark writes them as escaped text). pyfile reads every type Spark writes"
        ),
        columns=frozenset({"p_ts"}),
        formats=frozenset({"parquet"}),
        directions=frozenset({"write"}),
        cases=frozenset({"partitionBy timestamp"}),
        error=r"partition columns may be strings, integers, booleans or dates",
    ),
]
