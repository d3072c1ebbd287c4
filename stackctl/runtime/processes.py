"""Supervised local processes: start detached, record, check, stop. No stack knowledge here."""

from __future__ import annotations

import os
import signal
import time
from collections import deque
from pathlib import Path

from pydantic import BaseModel


class ProcessRecord(BaseModel):
    """What `up` wrote about a process it started (one JSON file per service)."""

    service: str
    pid: int
    # The kernel's start time of the process, so a recycled PID is never mistaken for ours.
    start_ticks: int
    started_at: float
    log_file: str
    log_offset: int = 0
    # How often the service was started since the `up` that made `generation` (restarts = starts - 1).
    starts: int = 1
    generation: float = 0.0


def is_running(record: ProcessRecord) -> bool:
    """Alive, not a zombie, and still the process we started."""
    ticks = start_ticks(record.pid)
    if ticks is None or ticks != record.start_ticks:
        return False
    _reap(record.pid)
    return _state(record.pid) not in (None, "Z", "X")


def stop_process(record: ProcessRecord, grace_s: float) -> bool:
    """SIGTERM the process group, SIGKILL after `grace_s`. True when something was stopped.

    Also cleans up a group whose leader already died (vLLM's helpers outlive a killed server)."""
    if not is_running(record) and not _group_alive(record.pid):
        return False
    _signal_group(record.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if not is_running(record) and not _group_alive(record.pid):
            return True
        time.sleep(0.1)
    _signal_group(record.pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (is_running(record) or _group_alive(record.pid)):
        time.sleep(0.05)
    return True


def tail(log_file: Path, lines: int, offset: int = 0) -> list[str]:
    """The last `lines` lines written at or after `offset`."""
    try:
        with log_file.open("rb") as handle:
            handle.seek(offset)
            kept: deque[bytes] = deque(handle, maxlen=lines)
    except OSError:
        return []
    return [line.decode(errors="replace").rstrip("\n") for line in kept]


def last_line(log_file: Path, offset: int = 0) -> str:
    try:
        size = log_file.stat().st_size
        with log_file.open("rb") as handle:
            handle.seek(max(offset, size - 8192))
            chunk = handle.read().decode(errors="replace")
    except OSError:
        return ""
    lines = [line.strip() for line in chunk.replace("\r", "\n").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _group_alive(pgid: int) -> bool:
    """Any live (non-zombie) process left in the group (e.g. a worker that ignored SIGTERM)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(int(entry.name))
        if fields and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            _reap(int(entry.name))
            return True
    return False


def _reap(pid: int) -> None:
    # Our own children become zombies until waited for; anyone else's are not ours to wait on.
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat fields after the command name: state, ppid, pgrp, ..."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def _state(pid: int) -> str | None:
    fields = _stat_fields(pid)
    return fields[0] if fields else None


def start_ticks(pid: int) -> int | None:
    fields = _stat_fields(pid)
    return int(fields[19]) if fields else None


def uptime_s(record: ProcessRecord) -> float:
    return max(0.0, time.time() - record.started_at)

