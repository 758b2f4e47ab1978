"""csv inference of DATE columns (Spark's preferDate), no JVM: the rules one token at a time.

Spark 4.3's answers on whole files are recorded in the csv-dates and csv-options golden cases
(tests/files/test_golden_reads.py); these pin the chain behind them: a token the dateFormat
(else yyyy-MM-dd, strictly) parses is a DATE, a DATE meeting a timestamp is a TIMESTAMP,
meeting anything else a STRING, and preferDate=false infers no DATE.
"""

from __future__ import annotations

import pytest
from pyspark.sql.types import (
    DataType,
    DateType,
    IntegerType,
    NullType,
    StringType,
    TimestampType,
)

from pysparksources.files.values.inferred_types import (
    DateRule,
    csv_date_rule,
    csv_token_type,
    merge_csv,
)


def column(tokens: list[str | None], dates: DateRule | None) -> DataType:
    """A column's type after its tokens, in order, as inference walks them."""
    so_far: DataType = NullType()
    for token in tokens:
        so_far = csv_token_type(so_far, token, dates)
    return so_far


DEFAULT = csv_date_rule(None, True)
DMY = csv_date_rule("dd/MM/yyyy", True)


@pytest.mark.parametrize(
    ("tokens", "dates", "expected"),
    [
        (["2024-01-03", None, "2024-01-04"], DEFAULT, DateType()),
        (["2024-01-03", "2024-01-04 10:00:00"], DEFAULT, TimestampType()),
        (["2024-01-04 10:00:00", "2024-01-03"], DEFAULT, TimestampType()),
        (["2024-01-03", "2024-1-5"], DEFAULT, TimestampType()),  # not strict: a timestamp
        (["2024-01-03", "1"], DEFAULT, StringType()),
        (["2024-01-03", "true"], DEFAULT, StringType()),
        (["1", "2024-01-03"], DEFAULT, StringType()),
        (["2024-02-30"], DEFAULT, StringType()),  # no such day: neither DATE nor TIMESTAMP
        (["2024-02-29"], DEFAULT, DateType()),
        (["2023-02-29"], DEFAULT, StringType()),
        ([" 2024-01-03"], DEFAULT, TimestampType()),  # the date parser does not trim
        (["10/03/2024", "31/12/1999"], DMY, DateType()),
        (["10/03/2024", "1/3/2024"], DMY, StringType()),  # dd: two digits
        (["31/02/2024"], DMY, StringType()),
        (["2024-01-03"], DMY, TimestampType()),  # the dateFormat replaces yyyy-MM-dd
        (["10/03/2024", "2024-01-01 10:00:00", "01/01/2024"], DMY, StringType()),
        (["2024-01-03"], None, TimestampType()),  # preferDate=false
        (["10/03/2024"], None, StringType()),
    ],
)
def test_csv_date_inference_follows_spark(
    tokens: list[str | None], dates: DateRule | None, expected: DataType
) -> None:
    assert column(tokens, dates) == expected


def test_dates_and_timestamps_merge_to_timestamp() -> None:
    assert merge_csv(DateType(), TimestampType()) == TimestampType()
    assert merge_csv(TimestampType(), DateType()) == TimestampType()
    assert merge_csv(DateType(), IntegerType()) == StringType()


def test_prefer_date_false_has_no_rule() -> None:
    assert csv_date_rule("dd/MM/yyyy", False) is None
