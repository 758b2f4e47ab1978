"""The class archive's background build (tests/support/jvm_archive.py), with a stand-in for
spark-submit that writes the file a JVM would write at exit."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from support.jvm_archive import ARCHIVE_NAME, archive_options, start_build

# Writes the -XX:ArchiveClassesAtExit file named in --driver-java-options after a pause.
FAKE_SUBMIT = """#!/bin/sh
for word in $*; do
  case "$word" in -XX:ArchiveClassesAtExit=*) target="${word#*=}" ;; esac
done
sleep "${FAKE_SUBMIT_PAUSE:-0}"
echo archived > "$target"
"""


def _fake_spark_home(tmp_path: Path) -> Path:
    home = tmp_path / "spark"
    (home / "bin").mkdir(parents=True)
    submit = home / "bin" / "spark-submit"
    submit.write_text(FAKE_SUBMIT)
    submit.chmod(0o755)
    return home


def _wait_for(path: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_the_build_runs_detached_and_renames_its_file_when_done(tmp_path: Path) -> None:
    folder, home = tmp_path / "layout", _fake_spark_home(tmp_path)
    folder.mkdir()
    os.environ["FAKE_SUBMIT_PAUSE"] = "1"
    try:
        start_build(folder, home, tmp_path, ("-XX:TieredStopAtLevel=1",))
        start_build(folder, home, tmp_path, ("-XX:TieredStopAtLevel=1",))  # one build only
    finally:
        del os.environ["FAKE_SUBMIT_PAUSE"]
    assert not (folder / ARCHIVE_NAME).exists()  # still building: nothing half-written
    _wait_for(folder / ARCHIVE_NAME)
    assert (folder / ARCHIVE_NAME).read_text() == "archived\n"
    _wait_for(tmp_path / "never", timeout=0.5)  # let the builder remove its guard
    assert not (folder / "archive.building").exists()
    assert "built" in (folder / "archive-build.log").read_text()


def test_a_guard_left_by_a_dead_builder_does_not_block_a_new_build(tmp_path: Path) -> None:
    folder, home = tmp_path / "layout", _fake_spark_home(tmp_path)
    folder.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (folder / "archive.building").write_text(str(dead.pid))
    start_build(folder, home, tmp_path, ())
    _wait_for(folder / ARCHIVE_NAME)
    assert (folder / ARCHIVE_NAME).is_file()


def test_a_live_builder_is_left_alone(tmp_path: Path) -> None:
    folder, home = tmp_path / "layout", _fake_spark_home(tmp_path)
    folder.mkdir()
    (folder / "archive.building").write_text(str(os.getpid()))  # alive: this process
    start_build(folder, home, tmp_path, ())
    _wait_for(folder / ARCHIVE_NAME, timeout=1)
    assert not (folder / ARCHIVE_NAME).exists()


def test_no_archive_option_for_a_path_spark_would_split(tmp_path: Path) -> None:
    assert archive_options(tmp_path / "a b") == []
    assert archive_options(tmp_path / "ab") == [
        f"-XX:SharedArchiveFile={tmp_path / 'ab' / ARCHIVE_NAME}",
        "-Xlog:cds=off",
        "-Xlog:cds+dynamic=off",
    ]
