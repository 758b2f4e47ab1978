"""``./dev bench``'s command: its scenarios and flags, and the environment its children get."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import SCENARIOS, bench_command, with_repository_path
from benchmarks._children import REPOSITORY, emulator_command
from benchmarks._command import _without_local_cluster, build_parser

# Every scenario, in the order `./dev bench --help` lists them.
EXPECTED = [
    "rate", "floor", "profile", "latency", "startup", "files-source", "files-sink",
    "files-malformed", "files-schema", "files-scale", "files-infer-memory", "eventhubs-source",
    "eventhubs-sink",
    "eventhubs-avro", "eventhubs-scale", "eventhubs-stages", "emulator", "soak",
]  # fmt: skip


def test_every_scenario_parses_with_its_defaults() -> None:
    assert list(SCENARIOS) == EXPECTED
    parser = build_parser()
    for name in EXPECTED:
        args = parser.parse_args([name])
        assert args.scenario == name
        if args.module.SPARK:
            assert args.master == "local[2]" and args.local_cluster is None and args.conf == []
    args = parser.parse_args(["rate", "--local-cluster", "2", "--conf", "a=b", "--rows", "1"])
    assert (args.local_cluster, args.conf, args.rows) == (2, ["a=b"], [1])
    soak = parser.parse_args(["soak", "--master", "spark://h:1", "--minutes", "0.5"])
    assert (soak.master, soak.minutes, soak.workers) == ("spark://h:1", 0.5, 2)
    with pytest.raises(SystemExit):
        parser.parse_args(["rate", "--master", "local[1]", "--local-cluster", "2"])


def test_the_local_cluster_children_run_the_rest_of_the_command() -> None:
    argv = ["rate", "--local-cluster", "2", "--rows", "10", "--local-cluster=3", "--batches", "1"]
    assert _without_local_cluster(argv) == ["rate", "--rows", "10", "--batches", "1"]


def test_the_repository_goes_first_on_the_python_path_once() -> None:
    root = str(REPOSITORY)
    assert (REPOSITORY / "benchmarks" / "__main__.py").is_file()
    assert with_repository_path({})["PYTHONPATH"] == root
    env = with_repository_path({"PYTHONPATH": os.pathsep.join(["/a", root, "/b"]), "X": "1"})
    assert env == {"PYTHONPATH": os.pathsep.join([root, "/a", "/b"]), "X": "1"}
    assert with_repository_path(env) == env
    assert bench_command("rate")[1:] == ["-m", "benchmarks", "rate"]
    assert emulator_command("--port", "0")[1:] == ["-m", "pysparksources_emulator", "--port", "0"]


def test_python_m_benchmarks_runs_from_any_folder(tmp_path: Path) -> None:
    env = with_repository_path({k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--help"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: ./dev bench")
    assert all(name in done.stdout for name in EXPECTED)
    assert "pysparksources bench" not in done.stdout
