"""Hive-style partition folders (``col=value/``) as Spark writes and discovers them.

A file's partition values are read from the ``col=value`` names nearest to it (Spark's
partition parsing); the sink writes its rows into such folders. Spark escapes a fixed set of
characters in folder names as ``%XX`` and writes null as ``__HIVE_DEFAULT_PARTITION__``; its
partition discovery undoes both, so values read back equal the values written. Splitting a
RecordBatch by its partition columns is vectorized (dictionary codes, one stable sort),
because Spark sends batches of 10,000 rows.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "NULL_PARTITION",
    "check_partition_types",
    "escape",
    "partition_spec",
    "partition_values",
    "relative_dir",
    "split_by_partition",
]

NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
_ESCAPED = frozenset(chr(c) for c in range(1, 0x20)) | frozenset("\"#%'*/:=?\\\x7f{[]^")


def escape(text: str) -> str:
    """A value or column name as a folder-name component, the way Spark escapes it."""
    return "".join(f"%{ord(ch):02X}" if ch in _ESCAPED else ch for ch in text)


def _supported(dtype: pa.DataType) -> bool:
    return bool(
        pa.types.is_string(dtype)
        or pa.types.is_large_string(dtype)
        or pa.types.is_integer(dtype)
        or pa.types.is_boolean(dtype)
        or pa.types.is_date32(dtype)
    )


def check_partition_types(schema: pa.Schema, columns: Sequence[str]) -> str | None:
    """A sentence naming the first partition column whose type has no stable folder text."""
    for name in columns:
        dtype = schema.field(name).type
        if not _supported(dtype):
            return (
                f"column {name!r} has type {dtype}; partition columns may be strings, "
                "integers, booleans or dates"
            )
    return None


def _text(value: object) -> str:
    if value is None:
        return NULL_PARTITION
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)  # ints as digits, dates as yyyy-mm-dd: what Spark's cast gives
    return escape(text) if text else NULL_PARTITION


def split_by_partition(
    batch: pa.RecordBatch, columns: Sequence[str]
) -> Iterator[tuple[str, pa.RecordBatch]]:
    """Yield ``(folder, rows)`` per distinct partition value; ``rows`` lack the columns."""
    keep = [i for i, name in enumerate(batch.schema.names) if name not in columns]
    data = batch.select(keep)
    codes = np.zeros(batch.num_rows, dtype=np.int64)
    dictionaries = []
    for name in columns:
        encoded = pc.dictionary_encode(batch.column(name), null_encoding="encode")
        indices = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        size = max(len(encoded.dictionary), 1)
        codes = codes * size + indices
        dictionaries.append((name, encoded.dictionary.to_pylist(), size))
    unique, inverse = np.unique(codes, return_inverse=True)
    if len(unique) == 1:
        yield _folder(int(unique[0]), dictionaries), data
        return
    order = np.argsort(inverse, kind="stable")
    counts = np.bincount(inverse, minlength=len(unique))
    ordered = data.take(pa.array(order))
    start = 0
    for code, count in zip(unique.tolist(), counts.tolist(), strict=True):
        yield _folder(code, dictionaries), ordered.slice(start, count)
        start += count


def _folder(code: int, dictionaries: list[tuple[str, list[object], int]]) -> str:
    parts = []
    for name, values, size in reversed(dictionaries):
        code, index = divmod(code, size)
        parts.append(f"{escape(name)}={_text(values[index])}")
    return "/".join(reversed(parts))


# -- reading: a folder's partition values ------------------------------------------------
def _column(name: str) -> tuple[str, str] | None:
    key, sep, value = name.partition("=")
    if not sep or not key:
        return None
    from urllib.parse import unquote

    return unquote(key), unquote(value)


def partition_spec(relative_dir: str) -> tuple[list[tuple[str, str]], str]:
    """Spark's partition parsing of one folder below the base: its ``col=value`` columns, and
    the folder they hang from ('' for the base itself).

    Walking up from the folder, names without ``=`` are passed over until a column is found;
    the first one after that ends the run (``a=1/x/b=2`` has the column b, hanging from
    ``a=1/x``). A folder with no column hangs from itself.
    """
    parts = [p for p in relative_dir.split("/") if p]
    columns: list[tuple[str, str]] = []
    i = len(parts)
    while i > 0:
        column = _column(parts[i - 1])
        if column is None:
            if columns:
                break
        else:
            columns.append(column)
        i -= 1
    if not columns:
        return [], "/".join(parts)
    return columns[::-1], "/".join(parts[:i])


def partition_values(relative_dir: str) -> dict[str, str]:
    """The partition columns of the files in a folder below the base, outermost first."""
    return dict(partition_spec(relative_dir)[0])


def relative_dir(base: str, path: str) -> str:
    """The folder part of ``path`` below ``base`` (for partition values)."""
    base_norm = base.rstrip("/") + "/"
    rel = path[len(base_norm) :] if path.startswith(base_norm) else path
    return posixpath.dirname(rel)
