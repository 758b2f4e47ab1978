"""The conformance corpus: one wide table holding every Spark SQL type pyfile supports.

Generated deterministically (a seeded ``random.Random``) as a pyarrow table and written once
as a parquet "seed" file, which Spark reads with :data:`DDL` as the reference DataFrame, so the
reference holds exact instants whatever the session time zone. The first rows are the edge
values of each type (extremes, NaN, ±Infinity, -0.0, empty and awkward strings, dates before
1582 and in year 9999, instants in DST gaps and overlaps, microseconds); the rest are random.
Every column is null in some rows.
"""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

SEED = 20261123
RANDOM_ROWS = 120
UTC = dt.timezone.utc

# column -> (Spark type, the name the summary table shows)
COLUMNS: dict[str, tuple[str, str]] = {
    "c_byte": ("TINYINT", "tinyint"),
    "c_short": ("SMALLINT", "smallint"),
    "c_int": ("INT", "int"),
    "c_long": ("BIGINT", "bigint"),
    "c_float": ("FLOAT", "float"),
    "c_double": ("DOUBLE", "double"),
    "c_dec9": ("DECIMAL(9,2)", "decimal(9,2)"),
    "c_dec38": ("DECIMAL(38,18)", "decimal(38,18)"),
    "c_string": ("STRING", "string"),
    "c_binary": ("BINARY", "binary"),
    "c_bool": ("BOOLEAN", "boolean"),
    "c_date": ("DATE", "date"),
    "c_ts": ("TIMESTAMP", "timestamp"),
    "c_ntz": ("TIMESTAMP_NTZ", "timestamp_ntz"),
    "c_array": ("ARRAY<BIGINT>", "array"),
    "c_map": ("MAP<STRING, DATE>", "map"),
    "c_struct": ("STRUCT<i: INT, s: STRING, ts: TIMESTAMP, l: ARRAY<DOUBLE>>", "struct"),
    "c_nested": (
        "ARRAY<STRUCT<m: MAP<STRING, ARRAY<TIMESTAMP>>, b: BINARY>>",
        "nested array<struct<map<string, array<timestamp>>, binary>>",
    ),
}
# Partition columns (built from the corpus in SQL, see test_options_partitions.py).
PARTITION_COLUMNS: dict[str, tuple[str, str]] = {
    "p_int": ("INT", "partition int"),
    "p_date": ("DATE", "partition date"),
    "p_str": ("STRING", "partition string"),
    "p_bool": ("BOOLEAN", "partition boolean"),
    "p_ts": ("TIMESTAMP", "partition timestamp"),
}
DDL = "id INT, " + ", ".join(f"{name} {spark}" for name, (spark, _) in COLUMNS.items())
FLAT = [c for c in COLUMNS if COLUMNS[c][0].split("<")[0] not in ("ARRAY", "MAP", "STRUCT")]

_ARROW: dict[str, pa.DataType] = {
    "c_byte": pa.int8(),
    "c_short": pa.int16(),
    "c_int": pa.int32(),
    "c_long": pa.int64(),
    "c_float": pa.float32(),
    "c_double": pa.float64(),
    "c_dec9": pa.decimal128(9, 2),
    "c_dec38": pa.decimal128(38, 18),
    "c_string": pa.string(),
    "c_binary": pa.binary(),
    "c_bool": pa.bool_(),
    "c_date": pa.date32(),
    "c_ts": pa.timestamp("us", tz="UTC"),
    "c_ntz": pa.timestamp("us"),
    "c_array": pa.list_(pa.int64()),
    "c_map": pa.map_(pa.string(), pa.date32()),
    "c_struct": pa.struct(
        [
            ("i", pa.int32()),
            ("s", pa.string()),
            ("ts", pa.timestamp("us", tz="UTC")),
            ("l", pa.list_(pa.float64())),
        ]
    ),
    "c_nested": pa.list_(
        pa.struct(
            [
                ("m", pa.map_(pa.string(), pa.list_(pa.timestamp("us", tz="UTC")))),
                ("b", pa.binary()),
            ]
        )
    ),
}

STRINGS = [
    "",
    " ",
    " lead",
    "trail ",
    "plain",
    "a,b",
    "semi;colon",
    "tab\there",
    "pipe|bar",
    'dq"uote',
    '"',
    "'single'",
    "back\\slash",
    "\\",
    "new\nline",
    "cr\rreturn",
    "crlf\r\nend",
    "ünïcödé 漢字 😀",
    "null",
    "NULL",
    "\\N",
    "NA",
    "#hash",
    "=eq",
    "100%",
    "a/b",
    "x\x01ctl",
]


def _instant(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


DATES = [
    dt.date(1, 1, 1),
    dt.date(1000, 6, 15),
    dt.date(1581, 12, 31),
    dt.date(1582, 10, 4),
    dt.date(1582, 10, 15),
    dt.date(1900, 2, 28),
    dt.date(1969, 12, 31),
    dt.date(1970, 1, 1),
    dt.date(2024, 2, 29),
    dt.date(9999, 12, 31),
]
# UTC instants: Los Angeles' spring gap (2024-03-10 02:00-03:00 local) and autumn overlap
# (2024-11-03 01:00-02:00 local, twice), Kolkata's +05:30, the edges of Spark's range, micros.
INSTANTS = [
    _instant("1970-01-01T00:00:00"),
    _instant("1969-12-31T23:59:59.999999"),
    _instant("0001-01-02T00:00:00"),
    _instant("1000-06-15T12:34:56.789012"),
    _instant("1582-10-10T00:00:00"),
    _instant("1900-01-01T08:00:00"),
    _instant("2024-03-10T09:59:59.999999"),
    _instant("2024-03-10T10:00:00"),
    _instant("2024-03-10T10:30:00.000001"),
    _instant("2024-11-03T08:30:00"),
    _instant("2024-11-03T09:30:00"),
    _instant("2024-11-03T09:00:00.5"),
    _instant("2024-06-30T18:30:00"),
    _instant("2024-01-01T00:00:00.123456"),
    _instant("9999-12-30T23:59:59.999999"),
    _instant("2043-08-01T19:00:00.000001"),  # DST after 2037: tz files list no transitions
]
WALL_TIMES = [t.replace(tzinfo=None) for t in INSTANTS] + [
    dt.datetime(2024, 3, 10, 2, 30),  # skipped in Los Angeles: no zone applies to NTZ
    dt.datetime(2024, 11, 3, 1, 30),
]
FLOATS = [
    float("nan"),
    float("inf"),
    float("-inf"),
    -0.0,
    0.0,
    1.0,
    -2.5,
    0.1,
    1 / 3,
    1e-45,
    3.4028234663852886e38,
    1.17549435e-38,
    16777217.0,
]
DOUBLES = [
    float("nan"),
    float("inf"),
    float("-inf"),
    -0.0,
    0.0,
    0.1,
    1 / 3,
    5e-324,
    1.7976931348623157e308,
    2.2250738585072014e-308,
    123456789.123456789,
    -1e21,
    1e-7,
]
DEC38 = [
    Decimal("0E-18"),
    Decimal("99999999999999999999.999999999999999999"),
    Decimal("-99999999999999999999.999999999999999999"),
    Decimal("0.000000000000000001"),
    Decimal("-0.000000000000000001"),
    Decimal("1.500000000000000000"),
    Decimal("12345678901234567890.123456789012345678"),
]
DEC9 = [Decimal("0.00"), Decimal("9999999.99"), Decimal("-9999999.99"), Decimal("0.01")]
INT_EDGES = {
    "c_byte": [-128, 127, 0, -1, 1],
    "c_short": [-32768, 32767, 0, -1],
    "c_int": [-(2**31), 2**31 - 1, 0, -1],
    "c_long": [-(2**63), 2**63 - 1, 0, -1],
}


def _edge(values: list[Any], i: int) -> Any:
    """Edge value ``i`` of a list, cycling, with a null every seventh row."""
    return None if i % 7 == 6 else values[i % len(values)]


def _random_string(rng: random.Random) -> str:
    alphabet = "abcXYZ 0129,;\"'\\\n\r\t|=%/éü漢😀"
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 12)))


def _random_instant(rng: random.Random) -> dt.datetime:
    micros = rng.randrange(-2_000_000_000_000_000, 4_000_000_000_000_000)
    return dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=micros)


def _row(i: int, rng: random.Random, edge: bool) -> dict[str, Any]:
    def maybe(value: Any) -> Any:
        return None if rng.random() < 0.1 else value

    if edge:
        row: dict[str, Any] = {c: _edge(INT_EDGES[c], i) for c in INT_EDGES}
        instant = _edge(INSTANTS, i)
        row |= {
            "c_float": _edge(FLOATS, i),
            "c_double": _edge(DOUBLES, i),
            "c_dec9": _edge(DEC9, i),
            "c_dec38": _edge(DEC38, i),
            "c_string": _edge(STRINGS, i),
            "c_binary": _edge([b"", b"\x00\xff\x10", "ü".encode(), bytes(range(40))], i),
            "c_bool": _edge([True, False], i),
            "c_date": _edge(DATES, i),
            "c_ts": instant,
            "c_ntz": _edge(WALL_TIMES, i),
        }
    else:
        row = {
            "c_byte": maybe(rng.randrange(-128, 128)),
            "c_short": maybe(rng.randrange(-32768, 32768)),
            "c_int": maybe(rng.randrange(-(2**31), 2**31)),
            "c_long": maybe(rng.randrange(-(2**63), 2**63)),
            "c_float": maybe(float(pa.scalar(rng.uniform(-1e6, 1e6), pa.float32()).as_py())),
            "c_double": maybe(rng.uniform(-1e12, 1e12)),
            "c_dec9": maybe(Decimal(rng.randrange(-999999999, 10**9)).scaleb(-2)),
            "c_dec38": maybe(Decimal(rng.randrange(-(10**38) + 1, 10**38)).scaleb(-18)),
            "c_string": maybe(_random_string(rng)),
            "c_binary": maybe(rng.randbytes(rng.randrange(0, 9))),
            "c_bool": maybe(rng.random() < 0.5),
            "c_date": maybe(dt.date(1, 1, 1) + dt.timedelta(days=rng.randrange(0, 3_652_058))),
            "c_ts": maybe(_random_instant(rng)),
            "c_ntz": maybe(_random_instant(rng).replace(tzinfo=None)),
        }
        instant = row["c_ts"]
    row["id"] = i
    row["c_array"] = maybe(
        [None if k == 2 else rng.randrange(-(2**40), 2**40) for k in range(i % 4)]
    )
    row["c_map"] = maybe({f"k{k}": (None if k == 1 else _edge(DATES, i + k)) for k in range(i % 3)})
    row["c_struct"] = maybe(
        {
            "i": maybe(rng.randrange(-1000, 1000)),
            "s": maybe(_edge(STRINGS, i)),
            "ts": maybe(instant),
            "l": maybe([_edge(DOUBLES, i + k) for k in range(i % 3)]),
        }
    )
    row["c_nested"] = maybe(
        [
            {
                "m": maybe({"a": [instant, None]} if k else {}),
                "b": maybe(rng.randbytes(3)),
            }
            for k in range(i % 3)
        ]
    )
    return row


def table() -> pa.Table:
    """The corpus: edge rows first, then random ones; column ``id`` identifies a row."""
    rng = random.Random(SEED)
    # Twice the longest edge list: every edge value lands on a row that is not a null row.
    edges = 2 * max(len(STRINGS), len(INSTANTS), len(WALL_TIMES), len(DOUBLES), len(DATES))
    rows = [_row(i, rng, True) for i in range(edges)]
    rows += [_row(i, rng, False) for i in range(edges, edges + RANDOM_ROWS)]
    schema = pa.schema([("id", pa.int32()), *((c, _ARROW[c]) for c in COLUMNS)])
    return pa.Table.from_pylist(rows, schema=schema)


def write_seed(folder: Path) -> Path:
    """The corpus as one parquet file for Spark to read as the reference DataFrame."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "corpus.parquet"
    pq.write_table(table(), path)
    return path
