"""``pysparksources eventhubs migrate-checkpoint`` on recorded and generated checkpoints.

No Spark here: the command only reads files. End-to-end proofs with Spark and the emulator are
in test_ehmigrate_stream.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import fsspec
from spark35_checkpoint import Batch, connector_offset, write_checkpoint

from pysparksources.cli import build_parser, main
from pysparksources.eventhubs._positions import parse_positions
from support.paths import DOCS

RECORDED = Path(__file__).parent / "spark35"
RATE = '{"offset":5,"timestamp":1000}'


def migrate(capsys: Any, *args: str) -> tuple[int, Any, str]:
    code = main(["eventhubs", "migrate-checkpoint", *args])
    captured = capsys.readouterr()
    printed = json.loads(captured.out) if code == 0 else captured.out
    return code, printed, captured.err


def orders(**seq_nos: int) -> str:
    return connector_offset({"orders": {int(p[1:]): s for p, s in seq_nos.items()}})


def test_recorded_multi_source_checkpoint_continues_after_last_commit(capsys: Any) -> None:
    code, printed, err = migrate(capsys, str(RECORDED / "multi"))
    assert code == 0
    # offsets/1 (committed) holds {"orders":{"2":3,"1":9,"3":10,"0":12}}; offsets/2 is not
    # committed, so its events are read again.
    assert printed == {"0": {"seqNo": 12}, "1": {"seqNo": 9}, "2": {"seqNo": 3}, "3": {"seqNo": 10}}
    assert "batch 1 is the last committed batch" in err
    assert "batch 2 was planned but not committed" in err
    assert "warning" not in err


def test_printed_positions_are_what_pyeventhub_reads(capsys: Any) -> None:
    code, printed, _ = migrate(capsys, str(RECORDED / "single"))
    assert code == 0
    positions = parse_positions(json.dumps(printed))
    assert {pid: (p.kind, p.seq_no, p.inclusive) for pid, p in positions.items()} == {
        "0": ("seqNo", 8, True),
        "1": ("seqNo", 9, True),
        "2": ("seqNo", 10, True),
        "3": ("seqNo", 11, True),
    }


def test_warns_about_partitions_the_checkpoint_does_not_name(capsys: Any, tmp_path: Path) -> None:
    write_checkpoint(tmp_path, "q", [Batch(1, [orders(p0=4, p1=2, p3=9)])], committed=1)
    code, printed, err = migrate(capsys, str(tmp_path), "--partition-count", "6")
    assert code == 0
    assert printed == {"0": {"seqNo": 4}, "1": {"seqNo": 2}, "3": {"seqNo": 9}}
    warning = next(line for line in err.splitlines() if "warning" in line)
    assert "partition(s) 2, 4, 5 of hub 'orders'" in warning
    assert "startingPosition" in warning and "@latest" in warning
    # Without the partition count only the gap is known; the rest is a note.
    code, _, err = migrate(capsys, str(tmp_path))
    assert code == 0
    assert "warning: the checkpoint does not name partition(s) 2 of" in err
    assert "pass --partition-count" in err


def test_reads_fsspec_urls(capsys: Any, tmp_path: Path) -> None:
    code, printed, _ = migrate(capsys, (RECORDED / "single").as_uri())
    assert code == 0 and printed["3"] == {"seqNo": 11}
    memory = fsspec.filesystem("memory")
    try:
        memory.put(str(RECORDED / "multi"), "/ckmig/multi", recursive=True)
        code, printed, _ = migrate(capsys, "memory://ckmig/multi")
        assert code == 0 and printed["0"] == {"seqNo": 12}
    finally:
        memory.rm("/ckmig", recursive=True)


def test_uncommitted_first_batch_starts_at_connector_initial_positions(
    capsys: Any, tmp_path: Path
) -> None:
    write_checkpoint(
        tmp_path,
        "q",
        [Batch(1, [RATE, orders(p0=9, p1=9)])],
        committed=0,
        initial={1: orders(p0=2, p1=0)},
    )
    code, printed, err = migrate(capsys, str(tmp_path))
    assert code == 0
    assert printed == {"0": {"seqNo": 2}, "1": {"seqNo": 0}}
    assert "no batch was committed" in err
    # Crashed before its first offsets entry: only the connector's own log exists.
    shutil.rmtree(tmp_path / "offsets")
    code, printed, _ = migrate(capsys, str(tmp_path))
    assert (code, printed) == (0, {"0": {"seqNo": 2}, "1": {"seqNo": 0}})


def test_hub_choice(capsys: Any, tmp_path: Path) -> None:
    both = connector_offset({"orders": {0: 5}, "payments": {0: 7, 1: 8}})
    write_checkpoint(tmp_path, "q", [Batch(1, [both])], committed=1)
    code, _, err = migrate(capsys, str(tmp_path))
    assert code == 1
    assert err.strip() == (
        "migrate-checkpoint: error: source 0 of batch 0 names several hubs "
        "(orders, payments); choose one with --hub"
    )
    code, printed, _ = migrate(capsys, str(tmp_path), "--hub", "payments")
    assert code == 0 and printed == {"0": {"seqNo": 7}, "1": {"seqNo": 8}}
    code, _, err = migrate(capsys, str(tmp_path), "--hub", "Orders")
    assert code == 1 and "hub 'Orders' is not in source 0 of batch 0" in err


def _invalid_checkpoints(root: Path) -> dict[str, tuple[Path, list[str], str]]:
    """name -> (location, extra args, the error text expected)."""
    cases: dict[str, tuple[Path, list[str], str]] = {}
    empty = root / "empty"
    empty.mkdir()
    cases["empty folder"] = (empty, [], "is not a Structured Streaming checkpoint")
    cases["missing"] = (root / "missing", [], "is not a Structured Streaming checkpoint")
    planned = write_checkpoint(root / "planned", "q", [Batch(1, [orders(p0=3)])], committed=0)
    cases["no commit"] = (planned, [], "(batch(es) 0 planned) and no Event Hubs initial")
    started = root / "started"
    write_checkpoint(started, "q", [], committed=0)
    cases["nothing planned"] = (started, [], "no source kept Event Hubs initial positions")
    multi = RECORDED / "multi"
    cases["rate index"] = (multi, ["--source-index", "0"], "source 0 of batch 1 is not an Event")
    cases["index too big"] = (multi, ["--source-index", "2"], "has 2 source(s) (indexes 0..1)")
    rate_only = write_checkpoint(root / "rate", "q", [Batch(1, [RATE, None])], committed=1)
    cases["no EH source"] = (rate_only, [], "no source of batch 0 has an Event Hubs offset")
    cases["void offset"] = (rate_only, ["--source-index", "1"], "source 1 of batch 0 is not an")
    twice = write_checkpoint(
        root / "twice", "q", [Batch(1, [orders(p0=1), orders(p0=2)])], committed=1
    )
    cases["two EH sources"] = (twice, [], "sources 0, 1 of batch 0 all look like Event Hubs")
    newer = write_checkpoint(root / "newer", "q", [Batch(1, [orders(p0=1)])], committed=1)
    log = newer / "offsets" / "0"
    log.write_bytes(b"v2" + log.read_bytes()[2:])
    cases["newer log"] = (newer, [], "is log version v2, written by a newer Spark")
    small = write_checkpoint(root / "small", "q", [Batch(1, [orders(p0=1, p5=2)])], committed=1)
    cases["count too small"] = (small, ["--partition-count", "4"], "names partition(s) 5 of hub")
    return cases


def test_errors_name_the_problem(capsys: Any, tmp_path: Path) -> None:
    for name, (location, args, expected) in _invalid_checkpoints(tmp_path).items():
        code, out, err = migrate(capsys, str(location), *args)
        assert (name, code, out) == (name, 1, ""), err
        assert err.startswith("migrate-checkpoint: error: "), (name, err)
        assert expected in err, (name, err)
        assert len(err.strip().splitlines()) == 1, (name, err)


def test_command_line_has_no_traceback_and_imports_no_spark_or_azure(tmp_path: Path) -> None:
    bad = tmp_path / "not-a-checkpoint"
    bad.mkdir()
    shutil.copytree(RECORDED / "multi", tmp_path / "ck")
    script = (
        "import sys\n"
        "from pysparksources.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "loaded = sorted({m.split('.')[0] for m in sys.modules} & {'pyspark', 'azure', 'py4j'})\n"
        "print('LOADED', loaded, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    ok = subprocess.run(
        [sys.executable, "-c", script, "eventhubs", "migrate-checkpoint", str(tmp_path / "ck")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["2"] == {"seqNo": 3}
    assert "LOADED []" in ok.stderr
    failed = subprocess.run(
        [sys.executable, "-m", "pysparksources.cli", "eventhubs", "migrate-checkpoint", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert failed.returncode == 1
    assert failed.stdout == ""
    assert "Traceback" not in failed.stderr
    assert failed.stderr.startswith("migrate-checkpoint: error: ")


def test_the_migration_page_documents_the_command_and_its_options() -> None:
    page = (DOCS / "migrating.md").read_text()
    section = page.split("## From the Scala connector", 1)[1].split("\n## ", 1)[0]
    assert "pysparksources eventhubs migrate-checkpoint <checkpointLocation>" in section
    assert "**Keep the checkpoint (preferred).**" in section
    parser = build_parser()
    migrate_parser = parser.parse_args(["eventhubs", "migrate-checkpoint", "x"])
    assert migrate_parser.handler.__name__ == "_eventhubs_migrate_checkpoint"
    tools = next(a for a in parser._actions if a.dest == "command").choices["eventhubs"]
    command = next(a for a in tools._actions if a.dest == "eventhubs_command")
    flags = [
        flag
        for action in command.choices["migrate-checkpoint"]._actions
        for flag in action.option_strings
        if flag.startswith("--") and flag != "--help"
    ]
    assert flags == ["--source-index", "--hub", "--partition-count"]
    for flag in flags:
        assert flag in section, f"docs/migrating.md's Scala section does not mention {flag}"
