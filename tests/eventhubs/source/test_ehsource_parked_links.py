"""Receivers parked by many Python workers on one machine stay within Event Hubs' five readers
per partition and consumer group (``_parked_links``), against the emulator, without Spark; and
the registry's folder, shared by the machine's workers, cannot be turned against its user."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pysparksources.eventhubs import _private_folder
from pysparksources.eventhubs._parked_links import (
    Slot,
    ask_to_close,
    is_asked_to_close,
    parked,
    unparked,
)
from pysparksources_emulator import EventHubsEmulator
from support.eventhubs import send
from support.parked_workers import context, worker

WORKERS = 7  # more Python workers than Event Hubs' five readers per partition
HUB = ("sb://ns/hub", "$Default", "3")
# Another Python worker of the machine: parks a receiver, then waits for its stdin to close
# and ends without unparking it, as a killed worker does.
PARKER = """
import sys
from pysparksources.eventhubs._parked_links import Slot, parked
parked(Slot(*sys.argv[1:4]), sys.argv[4])
print("parked", flush=True)
sys.stdin.read()
"""
# The same, but forking a child first that outlives it (a worker's subprocess).
FORKING_PARKER = """
import os, sys, time
from pysparksources.eventhubs._parked_links import Slot, parked
parked(Slot(*sys.argv[1:4]), sys.argv[4])
child = os.fork()
if child == 0:
    time.sleep(120)
    os._exit(0)
print("parked", child, flush=True)
sys.stdin.read()
"""


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The registry under a temp dir of the test's own (children find it through TMPDIR)."""
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(_private_folder, "_warned", False)
    yield tmp_path


def _parking_process(token: str, prefix: tuple[str, ...] = ()) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [*prefix, sys.executable, "-c", PARKER, *HUB, token],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "parked"
    return proc


def test_ask_to_close_marks_the_most_recently_parked_and_drops_ended_processes(
    registry: Path,
) -> None:
    slot = Slot(*HUB)
    assert Slot("sb://ns/hub", "$DEFAULT", "3").name == slot.name  # groups ignore case
    assert Slot("sb://ns/other", "$Default", "3").name != slot.name
    assert Slot("sb://ns/hub", "$Default", "4").name != slot.name
    folder = registry / f"pysparksources-receivers-{os.geteuid()}" / slot.name
    other, gone = _parking_process("other"), _parking_process("gone")
    try:
        gone.stdin.close()  # type: ignore[union-attr]  # ends without unparking: a crash
        gone.wait(30)
        parked(slot, "old")
        parked(slot, "new")
        now = time.time()
        for name, age in ((f"{os.getpid()}-old", 60), (f"{other.pid}-other", 30)):
            os.utime(folder / name, (now - age, now - age))
        # Spark's idle workers are first in, first out: the longest parked is reused next.
        assert ask_to_close(slot, keep=2) == 1
        assert is_asked_to_close(slot, "new") and not is_asked_to_close(slot, "old")
        assert not (folder / f"{other.pid}-other.close").exists()
        assert not (folder / f"{gone.pid}-gone").exists()  # its process ended: removed
        parked(slot, "new")  # parked again: the mark is gone with it
        assert not is_asked_to_close(slot, "new")
        assert ask_to_close(slot, keep=0) == 3
        # Entries are this user's alone: the folders 0700, the files 0600.
        for path, mode in (
            (folder.parent, 0o700),
            (folder, 0o700),
            (folder / f"{os.getpid()}-old", 0o600),
        ):
            assert stat.S_IMODE(path.lstat().st_mode) == mode, path
    finally:
        other.kill()
        other.wait(30)
        unparked(slot, "old")
        unparked(slot, "new")
    assert sorted(p.name for p in folder.iterdir()) == [
        f"{other.pid}-other",
        f"{other.pid}-other.close",
    ]
    assert ask_to_close(slot, keep=0) == 0  # killed: its lock went with it
    assert list(folder.iterdir()) == []


def _root(registry: Path) -> Path:
    return registry / f"pysparksources-receivers-{os.geteuid()}"


def _tree(path: Path) -> dict[str, tuple[int, int, int, str]]:
    """``path`` and every name under it, links not followed: mode, owner, mtime and content
    (a link's target)."""
    found = {}
    for name in [path, *path.rglob("*")]:
        seen = name.lstat()
        if name.is_symlink():
            content = os.readlink(name)
        else:
            content = name.read_text() if name.is_file() else ""
        found[str(name.relative_to(path))] = (seen.st_mode, seen.st_uid, seen.st_mtime_ns, content)
    return found


def _victim(registry: Path) -> Path:
    """Files of the user's where a planted link would lead the registry: named like its own
    entries (of processes alive and ended), marks and slot folders."""
    victim = registry / "home" / ".ssh"
    for folder in (victim, victim / Slot(*HUB).name):
        folder.mkdir(parents=True)
        (folder / "id_ed25519").write_text("a key")
        (folder / "1-abc").write_text("named like an entry of a live process")
        (folder / "999999-dead").write_text("named like an entry of an ended process")
        (folder / "999999-dead.close").write_text("named like a mark")
    return victim


def _use_registry() -> int:
    """What a worker does with the registry, twice over; how many receivers it asked."""
    slot, asked = Slot(*HUB), 0
    for _ in range(2):
        parked(slot, "mine")
        asked += ask_to_close(slot, keep=0) + is_asked_to_close(slot, "mine")
        unparked(slot, "mine")
        asked += ask_to_close(slot, keep=0)
    return asked


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_link_planted_at_the_registrys_name_turns_it_off_touching_nothing(
    registry: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Another user made the name first: a link into this user's files.
    victim = _victim(registry)
    before = _tree(victim)
    root = _root(registry)
    root.symlink_to(victim)
    os.lchown(root, 4242, 4242)
    with caplog.at_level(logging.WARNING):
        assert _use_registry() == 0
    assert _tree(victim) == before
    warnings = _warnings(caplog)
    assert len(warnings) == 1, warnings
    assert (
        f"{root} is a symbolic link" in warnings[0]
        and "registry of parked receivers is off" in warnings[0]
    )


@pytest.mark.parametrize(
    ("owner", "mode"),
    [(4242, 0o700), (None, 0o777), (None, 0o770), (None, 0o701), (None, 0o744)],
    ids=["another-users", "open-to-all", "group-writable", "others-can-enter", "others-can-read"],
)
def test_a_folder_not_private_to_the_user_turns_the_registry_off_touching_nothing(
    registry: Path, caplog: pytest.LogCaptureFixture, owner: int | None, mode: int
) -> None:
    root = _root(registry)
    slot_folder = root / Slot(*HUB).name
    slot_folder.mkdir(parents=True)
    (slot_folder / "999999-dead").write_text("an entry of an ended process")
    (slot_folder / f"{os.getpid()}-mine.close").write_text("asks our receiver to close")
    (root / "notes").write_text("the other user's")
    if owner is not None:
        for path in (root, slot_folder, *slot_folder.iterdir()):
            os.chown(path, owner, owner)
    root.chmod(mode)
    before = _tree(root)
    with caplog.at_level(logging.WARNING):
        assert _use_registry() == 0
    assert _tree(root) == before
    warnings = _warnings(caplog)
    assert len(warnings) == 1, warnings
    reason = "belongs to user id 4242" if owner else f"is open to other users (mode {mode:04o}"
    assert f"{root} {reason}" in warnings[0]


def test_links_inside_the_registry_are_never_followed(
    registry: Path, caplog: pytest.LogCaptureFixture
) -> None:
    victim = _victim(registry)
    before = _tree(victim)
    slot = Slot(*HUB)
    parked(slot, "mine")
    unparked(slot, "mine")
    folder = _root(registry) / slot.name
    (folder / "999999-link").symlink_to(victim / "id_ed25519")
    (folder / "999999-link.close").symlink_to(victim / "999999-dead")
    (folder / "999998-gone.close").symlink_to(victim / "999999-dead.close")
    (folder / "notes").write_text("not a name of the registry's")
    (folder / "123-fifo").unlink(missing_ok=True)
    os.mkfifo(folder / "123-fifo")  # opening it must not block
    assert ask_to_close(slot, keep=0) == 0
    assert _tree(victim) == before
    assert (folder / "notes").read_text() == "not a name of the registry's"
    assert (folder / "999999-link").is_symlink()  # not a regular file of the registry's
    # The slot's folder itself replaced by a link: the registry is off, nothing touched.
    shutil.rmtree(folder)
    folder.symlink_to(victim / slot.name)
    with caplog.at_level(logging.WARNING):
        assert _use_registry() == 0
    assert _tree(victim) == before
    warnings = _warnings(caplog)
    assert len(warnings) == 1 and f"{folder} is a symbolic link" in warnings[0], warnings


def test_a_private_runtime_dir_is_preferred_to_the_temp_dir(
    registry: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    runtime = registry / "run-user"
    runtime.mkdir(mode=0o700)
    runtime.chmod(0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    slot = Slot(*HUB)
    entry = Path(slot.name, f"{os.getpid()}-mine")
    with caplog.at_level(logging.WARNING):
        parked(slot, "mine")
        assert (runtime / "pysparksources-receivers" / entry).exists()
        assert not _root(registry).exists()
        unparked(slot, "mine")
        runtime.chmod(0o755)  # not private: not used, without a word (the temp dir is)
        parked(slot, "mine")
        assert (_root(registry) / entry).exists()
        unparked(slot, "mine")
    assert _warnings(caplog) == []


def test_a_worker_ended_in_another_pid_namespace_is_seen_ended(registry: Path) -> None:
    # Containers sharing /tmp each have their own pids: a pid in an entry's name says
    # nothing here (the worker below is pid 1 in its namespace, and pid 1 lives here too).
    command = ("unshare", "--pid", "--fork")
    try:
        subprocess.run([*command, "true"], check=True, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        pytest.skip("unshare --pid is not allowed here")
    slot = Slot(*HUB)
    folder = _root(registry) / slot.name
    worker = _parking_process("boxed", prefix=command)
    try:
        (entry,) = folder.glob("*-boxed")
        assert entry.name != f"{worker.pid}-boxed"  # another namespace's pid
        assert ask_to_close(slot, keep=0) == 1  # alive: asked to close
    finally:
        worker.stdin.close()  # type: ignore[union-attr]  # ends without unparking
        worker.wait(30)
    assert ask_to_close(slot, keep=0) == 0
    assert list(folder.iterdir()) == []


def test_a_child_that_outlives_its_worker_does_not_keep_its_entries_alive(
    registry: Path,
) -> None:
    slot = Slot(*HUB)
    proc = subprocess.Popen(
        [sys.executable, "-c", FORKING_PARKER, *HUB, "forked"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    word, child = proc.stdout.readline().split()
    try:
        assert word == "parked"
        assert ask_to_close(slot, keep=0) == 1  # the worker lives
        proc.stdin.close()  # type: ignore[union-attr]  # the worker ends; its child goes on
        proc.wait(30)
        os.kill(int(child), 0)  # still running
        assert ask_to_close(slot, keep=0) == 0
        assert list((_root(registry) / slot.name).iterdir()) == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(child), signal.SIGKILL)


def _run(
    conn: str, options: dict[str, str], batches: int, per_batch: int
) -> list[tuple[int, str | None]]:
    """Hand consecutive ranges of partition 0 to the workers in turn, one at a time, as Spark
    hands a partition's batches to whichever worker is idle."""
    ctx = context()
    channels = [(ctx.Queue(), ctx.Queue()) for _ in range(WORKERS)]
    procs = [
        ctx.Process(target=worker, args=({"connectionString": conn, **options}, r, out))
        for r, out in channels
    ]
    for proc in procs:
        proc.start()
    reports = []
    try:
        for batch in range(batches):
            ranges, results = channels[batch % WORKERS]
            ranges.put(("0", batch * per_batch, (batch + 1) * per_batch))
            reports.append(results.get(timeout=120))
    finally:
        for ranges, _ in channels:
            ranges.put(None)
        for proc in procs:
            proc.join(timeout=30)
            if proc.is_alive():
                proc.kill()
    return reports


@pytest.mark.slow
def test_seven_workers_reading_one_partition_in_turn_stay_within_five_readers(
    eventhubs_emulator: EventHubsEmulator,
) -> None:
    # Before: each worker parked its own receiver, and the sixth worker's link was refused
    # (amqp:resource-limit-exceeded) until a parked one idled out: its task failed after
    # receiverTimeout. Three rounds over the seven workers, each batch on the next worker, as
    # Spark's first-in-first-out pool of idle workers hands them out.
    conn = eventhubs_emulator.connection_string("test")
    per_batch, batches = 20, 3 * WORKERS
    send(conn, [f"e{i}" for i in range(per_batch * batches)], partition_id="0")
    options = {"receiverTimeout": "8s", "prefetchCount": "10", "receiveBatchSize": "10"}
    reports = _run(conn, options, batches, per_batch)
    errors = [error for _, error in reports if error]
    assert not errors, errors
    assert [events for events, _ in reports] == [per_batch] * batches
