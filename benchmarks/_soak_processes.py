"""The processes a soak run starts, kills and watches.

The emulator runs in its own process on one fixed port with its events in segment files, so it
can be killed and started again where the query's receivers reconnect. Spark's processes are
found by ancestry (the driver JVM under this process) and by command line (the executors of
this application), never by a name across the machine.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from benchmarks._children import emulator_command
from benchmarks._procfs import (
    ProcessFigures,
    children_by_parent,
    command_line,
    descendants,
    figures,
)

__all__ = ["EmulatorProcess", "SenderProcess", "SparkProcesses"]


class EmulatorProcess:
    """``python -m pysparksources_emulator`` on 127.0.0.1:``port`` with a data directory."""

    def __init__(self, port: int, hub: str, partitions: int, data_dir: Path) -> None:
        self.command = emulator_command(
            "--port", str(port), "--hub", f"{hub}:{partitions}", "--data-dir", str(data_dir)
        )
        self.proc: subprocess.Popen[str] | None = None
        self.connection_string = ""
        self.restarts = 0

    def start(self, timeout: float = 60) -> str:
        proc = subprocess.Popen(self.command, stdout=subprocess.PIPE, text=True)
        self.proc = proc
        assert proc.stdout is not None
        deadline = time.monotonic() + timeout
        for line in proc.stdout:
            if line.strip().startswith("Endpoint="):
                self.connection_string = line.strip()
                return self.connection_string
            if time.monotonic() > deadline:
                break
        self.stop()
        raise RuntimeError(f"the Event Hubs emulator did not start: {' '.join(self.command)}")

    def kill(self) -> None:
        """SIGKILL, as a crash: nothing is flushed or closed on the way out."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(30)

    def restart(self, down_seconds: float) -> None:
        self.kill()
        time.sleep(down_seconds)
        self.start()
        self.restarts += 1

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None and self.proc.poll() is None else None

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


class SenderProcess:
    """The steady-rate sender (``_soak_sender``) in its own process."""

    def __init__(self, conn: str, rate: float, partitions: int, ledger: Path, log: Path) -> None:
        command = [
            sys.executable, "-m", "benchmarks._soak_sender",
            conn, str(rate), str(partitions), str(ledger),
        ]  # fmt: skip
        with log.open("wb") as out:
            self.proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        if self.proc.returncode not in (0, -signal.SIGKILL):
            raise RuntimeError(f"the sender exited with {self.proc.returncode}")


class SparkProcesses:
    """The driver JVM this process started and the executor JVMs of application ``app_id``."""

    def __init__(self, app_id: str) -> None:
        self.app_id = app_id
        self.executors_killed = 0

    def driver_jvm(self, tree: dict[int, list[int]]) -> int | None:
        for pid in descendants(os.getpid(), tree):
            if "org.apache.spark.deploy.SparkSubmit" in command_line(pid):
                return pid
        return None

    def executor_jvms(self) -> list[int]:
        marker = f"--app-id {self.app_id}"
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                line = command_line(int(entry.name))
                if "CoarseGrainedExecutorBackend" in line and marker in line:
                    found.append(int(entry.name))
        return sorted(found)

    def kill_one_executor(self, timeout: float = 180) -> float:
        """SIGKILL the newest executor JVM; seconds until the cluster had a replacement."""
        before = self.executor_jvms()
        if not before:
            raise RuntimeError(f"no executor JVM of {self.app_id} on this machine")
        victim = before[-1]
        started = time.monotonic()
        with contextlib.suppress(ProcessLookupError):
            os.kill(victim, signal.SIGKILL)
        self.executors_killed += 1
        while time.monotonic() - started < timeout:
            now = self.executor_jvms()
            if victim not in now and len(now) >= len(before):
                return time.monotonic() - started
            time.sleep(0.5)
        return float("nan")

    def sample(self) -> dict[str, ProcessFigures]:
        """Figures per role, each summed over its processes."""
        tree = children_by_parent()
        driver = self.driver_jvm(tree)
        roles = {"driver Python": figures(os.getpid()), "driver JVM": ProcessFigures()}
        roles["driver Python workers"] = ProcessFigures()
        if driver is not None:
            roles["driver JVM"] = figures(driver)
            roles["driver Python workers"] = _python_below(driver, tree)
        roles["executor JVMs"] = ProcessFigures()
        roles["executor Python workers"] = ProcessFigures()
        for executor in self.executor_jvms():
            roles["executor JVMs"] += figures(executor)
            roles["executor Python workers"] += _python_below(executor, tree)
        return roles


def _python_below(pid: int, tree: dict[int, list[int]]) -> ProcessFigures:
    total = ProcessFigures()
    for child in descendants(pid, tree):
        if "python" in command_line(child).split(" ", 1)[0]:
            total += figures(child)
    return total
