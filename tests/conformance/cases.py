"""The cases beside the plain corpus: csv options, partition folders, ORC's readable range.

Shared by the tests and by the driver whose JVM zone differs from Python's.
"""

from __future__ import annotations

from corpus import FLAT
from harness import Case

CSV_COLUMNS = ", ".join(c for c in FLAT if c != "c_binary")
CSV_CASES = [
    Case(
        name="csv: header, sep ;, quote ', escape #, nullValue NA, dateFormat dd/MM/yyyy, "
        "zone-less timestampFormat, UTF-16, multiLine",
        spark_write={
            "header": "true",
            "sep": ";",
            "quote": "'",
            "escape": "#",
            "nullValue": "NA",
            "dateFormat": "dd/MM/yyyy",
            "timestampFormat": "yyyy-MM-dd HH:mm:ss.SSSSSS",
            "encoding": "UTF-16",
        },
        read={
            "header": "true",
            "sep": ";",
            "quote": "'",
            "escape": "#",
            "nullValue": "NA",
            "dateFormat": "dd/MM/yyyy",
            "timestampFormat": "yyyy-MM-dd HH:mm:ss.SSSSSS",
            "encoding": "UTF-16",
            "multiLine": "true",
        },
        sink={"header": "true", "sep": ";"},
        sink_read={"header": "true", "sep": ";", "multiLine": "true"},
        sql=f"SELECT id, {CSV_COLUMNS} FROM corpus",
    ),
    Case(
        name='csv: tab, doubled quotes (escape "), nullValue \\N, timeZone Asia/Kolkata, '
        "timestampFormat with millis, dateFormat yyyy.MM.dd, one line per record",
        spark_write={
            "sep": "\t",
            "escape": '"',
            "nullValue": "\\N",
            "timeZone": "America/Los_Angeles",
            "timestampFormat": "yyyy-MM-dd'T'HH:mm:ss.SSS",
            "dateFormat": "yyyy.MM.dd",
        },
        read={
            "sep": "\t",
            "escape": '"',
            "nullValue": "\\N",
            "timeZone": "America/Los_Angeles",
            "timestampFormat": "yyyy-MM-dd'T'HH:mm:ss.SSS",
            "dateFormat": "yyyy.MM.dd",
        },
        sink={"sep": "\t", "timeZone": "America/Los_Angeles"},
        sink_read={"sep": "\t", "timeZone": "America/Los_Angeles"},
        sql="SELECT id, "
        + CSV_COLUMNS.replace(
            "c_string", "regexp_replace(c_string, '[\\\\r\\\\n]', '|') AS c_string"
        )
        + " FROM corpus",
    ),
]
# Partition timestamps avoid the hour repeated when DST ends: Spark's own writer fails on two
# instants that share one wall-time folder name (FileAlreadyExistsException). Every partition
# value is picked by k = id % 9, so the 48 rows fill 9 folder paths, and among them every value
# of every column (nulls included, several in one path): each folder is a file both writers
# create and both readers open, and Spark's writer spends about 0.1 CPU-s on each.
PARTITIONS = Case(
    name="partitionBy",
    sql="""
        SELECT id, c_string,
               CAST(k % 3 - 1 AS INT) AS p_int,
               element_at(array(DATE'0001-01-01', DATE'1582-10-04', DATE'2024-02-29',
                                DATE'9999-12-31', NULL), CAST(k % 5 + 1 AS INT)) AS p_date,
               element_at(array('a b', 'x=y', 'a/b', '100%', 'ünï 漢', NULL, '', '#h?', 'k:v'),
                          CAST(k + 1 AS INT)) AS p_str,
               IF(k % 4 = 3, NULL, k % 2 = 0) AS p_bool,
               element_at(array(TIMESTAMP'2024-11-03 08:30:00Z', TIMESTAMP'2024-11-03 10:00:00Z',
                                TIMESTAMP'2024-03-10 10:00:00.5Z', NULL),
                          CAST(k % 4 + 1 AS INT)) AS p_ts
        FROM (SELECT id, c_string, id % 9 AS k FROM corpus WHERE id < 48)
    """,
    partition_by=("p_int", "p_date", "p_str", "p_bool", "p_ts"),
    sink_partition_by=("p_int", "p_date", "p_str", "p_bool"),
)
# pyfile's sink refuses timestamp partition columns (a documented difference, pinned here).
PARTITION_TS = Case(
    name="partitionBy timestamp",
    sql="SELECT id, c_string, TIMESTAMP'2024-11-03 08:30:00Z' + make_interval(0, 0, 0, "
    "CAST(id % 3 AS INT)) AS p_ts FROM corpus WHERE id < 12",
    partition_by=("p_ts",),
    sink_partition_by=("p_ts",),
    compared=("p_ts",),
)

# ORC timestamps pyarrow can read (nanoseconds): the corpus' instants within 1678..2261.
ORC_IN_RANGE = Case(
    name="orc: instants within 1678-2261",
    sql="""
        SELECT id, c_ts, c_ntz FROM corpus
        WHERE (c_ts IS NULL OR c_ts BETWEEN TIMESTAMP'1678-01-01 00:00:00Z'
                                        AND TIMESTAMP'2261-12-31 00:00:00Z')
          AND (c_ntz IS NULL OR c_ntz BETWEEN TIMESTAMP_NTZ'1678-01-01 00:00:00'
                                          AND TIMESTAMP_NTZ'2261-12-31 00:00:00')
    """,
)
