"""Where the CPU goes during a benchmark: CPU seconds of a process tree, every thread, read from
the scheduler's nanosecond counters (/proc/PID/task/TID/schedstat; /proc/PID/stat counts 10 ms
ticks), and the processes serving a TCP port (a server and its workers or engine processes).
Linux only, standard library only (the GPU check runs it before anything is installed)."""

from __future__ import annotations

import os
from pathlib import Path


def _parents() -> dict[int, int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    return parents


def tree_pids(roots: list[int]) -> set[int]:
    """`roots` and all their descendants."""
    parents = _parents()
    found: set[int] = set()
    todo = list(roots)
    while todo:
        current = todo.pop()
        if current in found:
            continue
        found.add(current)
        todo += [child for child, parent in parents.items() if parent == current]
    return found


def cpu_seconds(pids: set[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                total += int(Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()[0]) / 1e9
        except (OSError, ValueError):
            continue
    return total


def tree_cpu(pid: int) -> float:
    """CPU seconds of `pid` and its descendants (a proxy's workers), every thread."""
    return cpu_seconds(tree_pids([pid]))


def listening_pids(port: int) -> list[int]:
    """The processes holding a listening TCP socket on `port` (SO_REUSEPORT workers: each)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                inodes.add(fields[9])
    wanted = {f"socket:[{inode}]" for inode in inodes}
    return [int(entry) for entry in os.listdir("/proc") if entry.isdigit() and wanted & _fd_links(entry)]


def _fd_links(pid: str) -> set[str]:
    links = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return links
    for fd in fds:
        try:
            links.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:  # closed meanwhile (the listing's own descriptor, in this process)
            continue
    return links


class PortCpu:
    """CPU seconds, since it was made, of what serves each named port (and its children)."""

    def __init__(self, ports: dict[str, int]) -> None:
        self.trees = {name: tree_pids(listening_pids(port)) for name, port in ports.items()}
        self.start = {name: cpu_seconds(pids) for name, pids in self.trees.items()}

    def used(self) -> dict[str, float]:
        return {name: cpu_seconds(pids) - self.start[name] for name, pids in self.trees.items()}
