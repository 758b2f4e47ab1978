"""taskStatsPath in a folder others can write to: what they plant there never aims our appends
at another file of the user's, never hangs a task, never fails one (``_task_stats``)."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from pysparksources._core.option_table import Use
from pysparksources.eventhubs import _task_stats
from pysparksources.eventhubs.options import parse_options
from pysparksources.eventhubs.planning import EventHubPartition

CONN = "Endpoint=sb://127.0.0.1:5672;SharedAccessKeyName=k;SharedAccessKey=SECRETKEY42;EntityPath=h"
OTHER_USER = 4242
LINE = f"tasks-{os.getpid()}.jsonl"


def _record(path: Path) -> None:
    config = parse_options({"connectionString": CONN, "taskStatsPath": str(path)}, Use.STREAM_READ)
    _task_stats.record(EventHubPartition(config, "3", 10, 25, 0), "miss", 15, 0.5)


@pytest.fixture
def shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder every user can write to (sticky, like /tmp), beside the user's home."""
    monkeypatch.setattr(_task_stats, "_warned", False, raising=False)
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o1777)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("the user's own\n")
    return folder


def _folder_link(shared: Path, home: Path) -> Path:
    (shared / "stats").symlink_to(home)
    os.lchown(shared / "stats", OTHER_USER, OTHER_USER)
    return shared / "stats"


def _file_link(shared: Path, home: Path) -> Path:
    (shared / "stats").mkdir()
    (shared / "stats" / LINE).symlink_to(home / ".bashrc")
    os.lchown(shared / "stats" / LINE, OTHER_USER, OTHER_USER)
    return shared / "stats"


def _hard_link(shared: Path, home: Path) -> Path:
    (shared / "stats").mkdir()
    os.link(home / ".bashrc", shared / "stats" / LINE)
    return shared / "stats"


def _their_file(shared: Path, home: Path) -> Path:
    (shared / "stats").mkdir()
    (shared / "stats" / LINE).write_text("theirs\n")
    os.chown(shared / "stats" / LINE, OTHER_USER, OTHER_USER)
    return shared / "stats"


def _fifo(shared: Path, home: Path) -> Path:
    (shared / "stats").mkdir()
    os.mkfifo(shared / "stats" / LINE)
    return shared / "stats"


@pytest.mark.parametrize(
    ("plant", "reason"),
    [
        (_folder_link, f"it is a symbolic link of user id {OTHER_USER}'s"),
        (_file_link, f"{LINE} is a symbolic link"),
        (_hard_link, f"{LINE} has 2 names"),
        (_their_file, f"{LINE} belongs to user id {OTHER_USER}"),
        (_fifo, f"{LINE} is a FIFO"),
    ],
    ids=["folder-linked-by-another-user", "file-linked", "hard-link", "their-file", "fifo"],
)
def test_what_another_user_plants_is_never_written_through(
    shared: Path,
    caplog: pytest.LogCaptureFixture,
    plant: Callable[[Path, Path], Path],
    reason: str,
) -> None:
    home = shared.parent / "home"
    path = plant(shared, home)
    before = {p: p.read_bytes() for p in (*home.iterdir(), *path.iterdir()) if p.is_file()}
    with caplog.at_level(logging.WARNING):
        # Twice: one warning, and never a hang (a FIFO without a reader) or a failed task.
        task = threading.Thread(target=lambda: (_record(path), _record(path)), daemon=True)
        task.start()
        task.join(10)
        if task.is_alive():  # let the blocked open go before failing
            os.close(os.open(path / LINE, os.O_RDONLY | os.O_NONBLOCK))
        assert not task.is_alive(), "recording a task's statistics hung"
    after = {p: p.read_bytes() for p in (*home.iterdir(), *path.iterdir()) if p.is_file()}
    assert after == before
    assert sorted(p.name for p in home.iterdir()) == [".bashrc"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1, warnings
    assert f"taskStatsPath {path}: {reason}" in warnings[0], warnings


def test_the_users_own_links_are_followed(shared: Path, caplog: pytest.LogCaptureFixture) -> None:
    target = shared.parent / "home" / "stats"
    (shared / "mine").symlink_to(target)  # a link of this user's
    target.mkdir()
    with caplog.at_level(logging.WARNING):
        _record(shared / "mine")
        _record(shared / "mine")
    assert len((target / LINE).read_text().splitlines()) == 2
    assert caplog.records == []
