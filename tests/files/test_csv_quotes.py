"""csv quotes that close nothing: univocity's reading, and the fast path handing them over.

Spark (univocity, unescapedQuoteHandling STOP_AT_DELIMITER) keeps a field whose quote is
followed by more text as written, quotes and all; pyarrow's reader unquotes it. pyfile reads
such files with its Python reader: these tests check that reader against answers Spark 4.3
gave, and that pyarrow's reader is only trusted with files on which both agree, wherever the
reads of the file fall. Spark's own answers are recorded in the csv-quotes golden case.
"""

from __future__ import annotations

import io

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pysparksources.files.config import ReaderOptions
from pysparksources.files.formats._csv_records import (
    EscapeSeen,
    EscapeWatch,
    spark_csv_records,
    split_records,
)
from pysparksources.files.formats.csv import string_batches


def _options(multi_line: bool = False, escape: str = "\\") -> ReaderOptions:
    return ReaderOptions(
        format="csv",
        header=False,
        sep=",",
        quote='"',
        escape=escape,
        null_value="",
        encoding="UTF-8",
        multi_line=multi_line,
        date_format=None,
        timestamp_format=None,
        wholetext=False,
        line_sep=None,
        time_zone=None,
        ignore_corrupt_files=False,
        ignore_missing_files=False,
        mode="PERMISSIVE",
        corrupt_column="_corrupt_record",
        format_options={},
    )


# (a record's text, what Spark 4.3 reads from it with the default quote and escape)
SPARK_READS = [
    ('1,"say ""hi""",20', ["1", '"say ""hi"""', "20"]),
    ('2,"a ""b"", c",30', ["2", '"a ""b""', ' c"', "30"]),
    ('3,"""",40', ["3", '""', "40"]),
    ('4,"x""",50', ["4", 'x""', "50"]),
    ('5,"""y",60', ["5", '"""y"', "60"]),
    ('7,"q"x,80', ["7", '"q"x', "80"]),
    ('8,"ab"" ",90', ["8", '"ab"" "', "90"]),
    ('9,"ab" ,10', ["9", "ab", "10"]),
    ('10,"ab" c,20', ["10", '"ab" c', "20"]),
    ('11,"a,"b",30', ["11", '"a,"b"', "30"]),
    ('12,"a"",b",40', ["12", 'a"', 'b"', "40"]),
    ('13,"a" "b",50', ["13", '"a" "b"', "50"]),
    ('14,"ab"\t,70', ["14", "ab", "70"]),
    ('15,"a"""""', ["15", 'a""""']),
    ('16,"" ,170', ["16", None, "170"]),
    ('17,""x,180', ["17", '""x', "180"]),
    ('18,"a\\"b""c",10', ["18", '"a"b""c"', "10"]),
    ('19,"x\\\\y""z",40', ["19", '"x\\y""z"', "40"]),
    ('20,x"y,60', ["20", 'x"y', "60"]),
]


@pytest.mark.parametrize(("line", "spark"), SPARK_READS, ids=[s[1][0] for s in SPARK_READS])
def test_python_reader_reads_quotes_as_spark(line: str, spark: list[str | None]) -> None:
    values = [v for v, _ in split_records([line], ",", '"', "\\", "")]
    assert values == [spark]


def test_quotes_escaping_quotes_read_as_spark() -> None:
    # escape '"': a doubled quote is one quote; a quote followed by text still closes nothing.
    lines = ['1,"say ""hi""",20', '2,"a ""b"", c",30', '3,"""",40', '4,"q"x,80', '5,"ab"" ",9']
    got = [v for v, _ in split_records(lines, ",", '"', "", "")]
    spark = [
        ["1", 'say "hi"', "20"],
        ["2", 'a "b", c', "30"],
        ["3", '"', "40"],
        ["4", '"q"x', "80"],
        ["5", 'ab" ', "9"],
    ]
    assert got == spark


def test_multiline_stops_a_field_read_as_written_at_the_line_end() -> None:
    text = '1,"say ""hi"""\n3,"a""b\nc",30\n5,"a""\n",50\n6,"ab"\n7,"q""\n'
    got = [
        v
        for v, _ in spark_csv_records(
            io.BytesIO(text.encode()), "UTF-8", ",", '"', "\\", "", False, True
        )
    ]
    spark = [
        ["1", '"say ""hi"""'],
        ["3", '"a""b'],
        ['c"', "30"],
        ["5", 'a"'],
        ['",50\n6,"ab"'],
        ["7", 'q"'],
    ]
    assert got == spark


class _Chunks(io.RawIOBase):
    """A file whose reads return at most ``size`` bytes."""

    def __init__(self, data: bytes, size: int) -> None:
        self._data, self._size, self._pos = data, size, 0

    def read(self, size: int = -1) -> bytes:
        end = self._pos + (self._size if size < 0 else min(size, self._size))
        chunk, self._pos = self._data[self._pos : end], min(end, len(self._data))
        return chunk


def _seen(data: bytes, size: int, multi_line: bool) -> bool:
    watch = EscapeWatch(_Chunks(data, size), b"\\", b'"', b",", multi_line)
    try:
        while watch.read(1 << 20):
            pass
    except EscapeSeen:
        return True
    return False


@pytest.mark.parametrize(
    ("text", "seen"),
    [
        ('1,"a, b",10\n3,"",\n4,,"40"\n7,plain "inner" quotes,70\n', False),
        ('"x,y",1\n"z"', False),
        ('1,"say ""hi""",20\n', True),
        ('"q"x\n', True),
        ('1,"ab" ,2\n', True),
        ('1,"unterminated\n2,"b",3\n', True),
        ("1,a\\b\n", True),
    ],
)
def test_the_fast_path_hands_over_quotes_that_close_nothing(text: str, seen: bool) -> None:
    data = text.encode()
    assert [_seen(data, size, False) for size in (1, 2, 3, len(data))] == [seen] * 4


CSV_TEXT = st.lists(st.sampled_from(["a", " ", ",", '"', "\n", "\r", "\t", "\\"]), max_size=40).map(
    "".join
)


@settings(max_examples=300, deadline=None)
@given(text=CSV_TEXT, multi_line=st.booleans(), size=st.integers(1, 8))
def test_pyarrow_is_trusted_only_where_it_reads_as_spark(
    text: str, multi_line: bool, size: int
) -> None:
    """Where the watch lets pyarrow read a file of records of one width, pyarrow's values are
    the Python reader's (univocity's); and the watch decides alike however the reads fall."""
    data = text.encode()
    assert _seen(data, size, multi_line) == _seen(data, len(data) + 1, multi_line)
    opts = _options(multi_line)
    expected = [
        v
        for v, _ in spark_csv_records(
            io.BytesIO(data), "UTF-8", ",", '"', "\\", "", False, multi_line
        )
    ]
    if not expected or len({len(v) for v in expected}) != 1:
        return  # records of several widths are malformed: parse modes' business
    names = [f"_c{i}" for i in range(len(expected[0]))]
    try:
        batches = list(string_batches(io.BytesIO(data), names, opts))
    except (pa.ArrowInvalid, ValueError):
        return  # pyarrow refused: the tolerant reader reads the file again in Python
    got = [list(row.values()) for b in batches for row in b.to_pylist()]
    assert got == expected
