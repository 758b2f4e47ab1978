"""Write checkpoints byte for byte as Spark 3.5 and the Scala Event Hubs connector leave them.

Checked against checkpoints recorded with pyspark 3.5.9 (``spark35/``, see its README): the
generator reproduces every file of them, ``.crc`` files included. Facts, with the Spark and
connector classes they come from, are in docs/pyeventhub-source.md ("Checkpoints of the Scala
connector"). In short, on a local filesystem:

- ``metadata``: ``{"id":"<uuid>"}``, no final newline.
- ``offsets/<batchId>``: ``v1``, the batch metadata JSON, one line per source (offset JSON or
  ``-``), lines joined by ``\\n``, no final newline.
- ``commits/<batchId>``: ``v1`` and ``{"nextBatchWatermarkMs":<ms>}``.
- ``sources/<index>/0`` (the connector's initial positions): a zero byte, ``v1\\n``, the offset.
- every file ``f`` has a Hadoop checksum file ``.f.crc`` beside it.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "SPARK_35_CONF",
    "Batch",
    "connector_offset",
    "scala_212_hashmap_order",
    "write_checkpoint",
]

# OffsetSeqMetadata.conf as a default pyspark 3.5.9 query records it, in the order Scala's
# immutable HashMap writes these ten keys (recorded, not sorted).
SPARK_35_CONF: tuple[tuple[str, str], ...] = (
    (
        "spark.sql.streaming.stateStore.providerClass",
        "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider",
    ),
    ("spark.sql.streaming.join.stateFormatVersion", "2"),
    ("spark.sql.streaming.stateStore.compression.codec", "lz4"),
    ("spark.sql.optimizer.pruneFiltersCanPruneStreamingSubplan", "false"),
    ("spark.sql.streaming.stateStore.rocksdb.formatVersion", "5"),
    ("spark.sql.streaming.statefulOperator.useStrictDistribution", "true"),
    ("spark.sql.streaming.flatMapGroupsWithState.stateFormatVersion", "2"),
    ("spark.sql.streaming.multipleWatermarkPolicy", "min"),
    ("spark.sql.streaming.aggregation.stateFormatVersion", "2"),
    ("spark.sql.shuffle.partitions", "200"),
)

_MASK = 0xFFFFFFFF


def _byteswap32(value: int) -> int:
    """scala.util.hashing.byteswap32 on 32-bit two's complement ints."""
    h = (value * 0x9E3775CD) & _MASK
    h = int.from_bytes(h.to_bytes(4, "big")[::-1], "big")
    return (h * 0x9E3775CD) & _MASK


def _java_string_hash(text: str) -> int:
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i : i + 2], "big")) & _MASK
    return h


def _bucket(key_hash: int, table_length: int, seed: int) -> int:
    mixed = _byteswap32(key_hash & _MASK)
    rotated = ((mixed >> seed) | (mixed << (32 - seed))) & _MASK
    bits = table_length.bit_length() - 1  # the top log2(length) bits choose the bucket
    return rotated >> (32 - bits)


def scala_212_hashmap_order(keys: Iterable[int | str]) -> list[int | str]:
    """Iteration order of a Scala 2.12 ``mutable.HashMap`` filled with ``keys`` in order.

    Its hash table starts with 16 buckets and doubles when more than 3/4 full; a bucket is
    chosen from the top bits of byteswap32(hashCode) rotated by the initial table's seed (4);
    a new entry goes to the head of its bucket; iteration walks buckets from the last to the
    first. json4s writes a map in this order, so the Scala connector's offsets do too.
    """
    length, seed = 16, 4
    table: list[list[int | str]] = [[] for _ in range(length)]

    def key_hash(key: int | str) -> int:
        return key if isinstance(key, int) else _java_string_hash(key)

    size = 0
    for key in keys:
        if any(key in chain for chain in table):
            continue
        table[_bucket(key_hash(key), length, seed)].insert(0, key)
        size += 1
        if size > length * 3 // 4:
            length *= 2
            grown: list[list[int | str]] = [[] for _ in range(length)]
            for chain in reversed(table):
                for moved in chain:
                    grown[_bucket(key_hash(moved), length, seed)].insert(0, moved)
            table = grown
    return [key for chain in reversed(table) for key in chain]


def connector_offset(hubs: dict[str, dict[int, int]]) -> str:
    """The Scala connector's offset JSON, as its Scala 2.12 build writes it.

    It sorts (hub, partition) pairs, fills nested mutable HashMaps in that order and writes
    them with json4s: keys come out in hash-table order, not sorted. One source reads one hub;
    several hubs only appear in hand-made offsets.
    """
    parts = []
    for hub in scala_212_hashmap_order(sorted(hubs)):
        seq_nos = hubs[str(hub)]
        order = scala_212_hashmap_order(sorted(seq_nos))
        inner = ",".join(f'"{p}":{seq_nos[int(p)]}' for p in order)
        parts.append(f'"{hub}":{{{inner}}}')
    return "{" + ",".join(parts) + "}"


@dataclass(frozen=True)
class Batch:
    """One planned micro-batch: its timestamp and every source's end offset (None: ``-``)."""

    timestamp_ms: int
    sources: Sequence[str | None]
    watermark_ms: int = 0
    conf: tuple[tuple[str, str], ...] = field(default=SPARK_35_CONF)


def _hadoop_crc(data: bytes) -> bytes:
    """Hadoop's ChecksumFileSystem file: magic, bytes per checksum (512), CRC32 per chunk."""
    sums = b"".join(
        struct.pack(">I", zlib.crc32(data[i : i + 512])) for i in range(0, len(data), 512)
    )
    return b"crc\x00" + struct.pack(">i", 512) + sums


def _write(path: Path, data: bytes, crc: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    if crc:
        (path.parent / f".{path.name}.crc").write_bytes(_hadoop_crc(data))


def _metadata_line(batch: Batch) -> str:
    conf = ",".join(f'"{key}":"{value}"' for key, value in batch.conf)
    return (
        f'{{"batchWatermarkMs":{batch.watermark_ms},"batchTimestampMs":{batch.timestamp_ms},'
        f'"conf":{{{conf}}}}}'
    )


def write_checkpoint(
    root: Path,
    query_id: str,
    batches: Sequence[Batch],
    committed: int,
    initial: dict[int, str] | None = None,
    crc: bool = True,
) -> Path:
    """Write a checkpoint whose first ``committed`` batches completed (the rest only planned).

    ``initial`` maps a source index to the offset JSON a V1 source stored in
    ``sources/<index>/0`` (the Scala connector's initial positions).
    """
    _write(root / "metadata", f'{{"id":"{query_id}"}}'.encode(), crc)
    for batch_id, batch in enumerate(batches):
        lines = ["v1", _metadata_line(batch), *(s if s is not None else "-" for s in batch.sources)]
        _write(root / "offsets" / str(batch_id), "\n".join(lines).encode(), crc)
        if batch_id < committed:
            commit = f'v1\n{{"nextBatchWatermarkMs":{batch.watermark_ms}}}'
            _write(root / "commits" / str(batch_id), commit.encode(), crc)
    for index, offset in (initial or {}).items():
        _write(root / "sources" / str(index) / "0", b"\x00v1\n" + offset.encode(), crc)
    return root
