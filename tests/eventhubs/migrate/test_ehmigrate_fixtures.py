"""The checkpoint generator reproduces what real Spark 3.5 and the Scala connector write."""

from __future__ import annotations

from pathlib import Path

import pytest
from spark35_checkpoint import Batch, connector_offset, scala_212_hashmap_order, write_checkpoint

RECORDED = Path(__file__).parent / "spark35"

# Printed by spark35/record/connector_json_order.scala on Scala 2.12.18 + json4s 3.7.0-M11
# (pyspark 3.5.9's jars): the connector's way of writing {hub: {partition: seqNo}}.
SCALA_SAMPLES = {
    "R1": ({"hub": {p: 10 + p for p in range(4)}}, '{"hub":{"2":12,"1":11,"3":13,"0":10}}'),
    "R2": (
        {"orders": {p: 100 * p for p in range(12)}},
        '{"orders":{"8":800,"11":1100,"2":200,"5":500,"4":400,"7":700,"10":1000,"1":100,'
        '"9":900,"3":300,"6":600,"0":0}}',
    ),
    "R4": (
        {"ehName1": {0: 456, 1: 789}, "ehName2": {0: 0}},
        '{"ehName1":{"1":789,"0":456},"ehName2":{"0":0}}',
    ),
    "R5": ({"hub": {0: 3, 1: 3}}, '{"hub":{"1":3,"0":3}}'),
    "R7": (
        {"telemetry": {0: 1}, "orders": {0: 2}, "payments": {1: 3}, "Orders": {0: 4}},
        '{"orders":{"0":2},"Orders":{"0":4},"telemetry":{"0":1},"payments":{"1":3}}',
    ),
}
# R3 (32 partitions, two table resizes) and R6 (100 partitions, 128 buckets): key order only.
R3_ORDER = [
    23, 8, 17, 26, 11, 29, 2, 20, 5, 14, 4, 13, 31, 22, 7, 16,
    25, 10, 1, 28, 19, 27, 9, 18, 12, 3, 21, 30, 15, 6, 24, 0,
]  # fmt: skip
R6_ORDER = [
    92, 83, 23, 95, 77, 86, 50, 59, 41, 32, 68, 53, 62, 35, 44, 8, 17, 26, 80, 89, 98, 71, 11,
    74, 56, 38, 29, 47, 20, 2, 65, 5, 14, 46, 82, 91, 55, 64, 73, 58, 67, 85, 94, 40, 49, 4, 13,
    22, 31, 76, 16, 97, 7, 79, 88, 70, 43, 52, 25, 34, 61, 10, 37, 1, 28, 19, 60, 87, 96, 69,
    78, 99, 63, 90, 45, 54, 72, 81, 27, 36, 9, 18, 48, 21, 57, 12, 3, 84, 93, 75, 30, 39, 66,
    15, 42, 51, 33, 24, 6, 0,
]  # fmt: skip


@pytest.mark.parametrize("name", sorted(SCALA_SAMPLES))
def test_connector_offset_matches_scala(name: str) -> None:
    hubs, recorded = SCALA_SAMPLES[name]
    assert connector_offset(hubs) == recorded


def test_hash_order_through_resizes_matches_scala() -> None:
    assert scala_212_hashmap_order(range(32)) == R3_ORDER
    assert scala_212_hashmap_order(range(100)) == R6_ORDER


def _files(root: Path) -> dict[str, bytes]:
    files = sorted(p for p in root.rglob("*") if p.is_file())
    return {str(p.relative_to(root)): p.read_bytes() for p in files}


def _rate(offset: int, timestamp: int) -> str:
    return f'{{"offset":{offset},"timestamp":{timestamp}}}'


def _orders(*seq_nos: int) -> str:
    return connector_offset({"orders": dict(enumerate(seq_nos))})


def test_generator_reproduces_recorded_multi_source_checkpoint(tmp_path: Path) -> None:
    # Only the query id and the batch clocks are taken from the recording: Spark chose them.
    write_checkpoint(
        tmp_path,
        "b2ec2390-7d74-41fa-b348-ee7625573849",
        [
            Batch(1795460224531, [_rate(5, 1000), _orders(5, 7, 3, 4)]),
            Batch(1795460232662, [_rate(10, 2000), _orders(12, 9, 3, 10)]),
            Batch(1795460233937, [_rate(15, 3000), _orders(20, 15, 8, 11)]),
        ],
        committed=2,
        initial={1: _orders(0, 0, 0, 0)},
    )
    recorded = _files(RECORDED / "multi")
    assert "offsets/2" in recorded and "commits/2" not in recorded
    assert _files(tmp_path) == recorded


def test_generator_reproduces_recorded_single_source_checkpoint(tmp_path: Path) -> None:
    write_checkpoint(
        tmp_path,
        "0423e467-5d60-4d47-820d-8f109852403b",
        [
            Batch(1795460255101, [_orders(3, 4, 5, 6)]),
            Batch(1795460263464, [_orders(8, 9, 10, 11)]),
        ],
        committed=2,
        initial={0: _orders(0, 0, 0, 0)},
    )
    assert _files(tmp_path) == _files(RECORDED / "single")
