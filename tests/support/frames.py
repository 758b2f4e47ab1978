"""Comparing a pyfile DataFrame with Spark's own reader's, row for row."""

from __future__ import annotations

from typing import Any

__all__ = ["assert_same_rows"]


def _comparable(df: Any) -> Any:
    """Maps as sorted entry arrays: set operations refuse map columns."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import MapType

    return df.select(
        *[
            F.array_sort(F.map_entries(f.name)).alias(f.name)
            if isinstance(f.dataType, MapType)
            else F.col(f.name)
            for f in df.schema.fields
        ]
    )


def assert_same_rows(expected: Any, actual: Any, what: str) -> None:
    """The same multiset of rows: ``exceptAll`` is empty both ways.

    Not ``count()``: Spark counts a csv without parsing its columns, so its count includes
    the records DROPMALFORMED drops when the columns are read.
    """
    expected, actual = _comparable(expected), _comparable(actual)
    missing = expected.exceptAll(actual).limit(5).collect()
    extra = actual.exceptAll(expected).limit(5).collect()
    if missing or extra:
        shown = "\n".join(
            [f"  only Spark's: {r}" for r in missing] + [f"  only pyfile's: {r}" for r in extra]
        )
        raise AssertionError(f"{what}:\n{shown}")
