"""Real service processes for integration tests: start on loopback, wait until ready, always stop."""

from __future__ import annotations

import os
import random
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

_HANDED_OUT: set[int] = set()  # this test process's ports, never handed out twice


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now (the one helper the suites share)."""
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """`count` distinct free ports: each socket stays bound until all are picked.

    Drawn from below the kernel's ephemeral range: a port from that range, picked now and
    listened on minutes later (a stack's filter-proxy starts after vLLM), can meanwhile become
    the local end of some client's kept-alive connection (Prometheus scraping an exporter),
    and the listener then fails with "address already in use". Below the range only an
    explicit bind takes a port."""
    low, high = _below_ephemeral_range()
    sockets: list[socket.socket] = []
    ports: list[int] = []
    try:
        while len(ports) < count:
            port = random.randint(low, high)
            if port in ports or port in _HANDED_OUT:
                continue  # a port handed out earlier may not be listened on yet
            sock = socket.socket()
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                sock.close()
                continue
            sockets.append(sock)
            ports.append(port)
        _HANDED_OUT.update(ports)
        return ports
    finally:
        for sock in sockets:
            sock.close()


def _below_ephemeral_range() -> tuple[int, int]:
    try:
        first_ephemeral = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        first_ephemeral = 32768
    return max(10000, first_ephemeral // 2), first_ephemeral - 1


def require(tool: str) -> str:
    path = shutil.which(tool) or shutil.which(tool, path="/usr/sbin:/usr/bin")
    assert path, f"{tool} is not installed: run scripts/setup"
    return path


@dataclass
class Service:
    name: str
    process: subprocess.Popen
    log_path: Path

    def log_tail(self, lines: int = 25) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self, grace_s: float = 10) -> None:
        if self.process.poll() is None:
            _signal_group(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(grace_s)
            except subprocess.TimeoutExpired:
                pass
        _signal_group(self.process.pid, signal.SIGKILL)  # stragglers (workers) too
        self.process.wait()


class Services:
    """Every process a fixture started; `stop_all` stops them in reverse order."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.started: list[Service] = []

    def start(self, name: str, argv: Sequence[str], *, env: dict[str, str] | None = None,
              ready: Callable[[], bool] | None = None, timeout_s: float = 60, cwd: Path | None = None) -> Service:
        log_path = self.log_dir / f"{name}.log"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                list(argv), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=env if env is not None else os.environ.copy(), cwd=cwd, start_new_session=True,
            )
        service = Service(name, process, log_path)
        self.started.append(service)
        if ready is not None:
            wait_until(ready, timeout_s, f"{name} to become ready", service)
        return service

    def stop_all(self) -> None:
        for service in reversed(self.started):
            service.stop()
        self.started.clear()


@contextmanager
def services(log_dir: Path) -> Iterator[Services]:
    group = Services(log_dir)
    try:
        yield group
    finally:
        group.stop_all()


def eventually(condition: Callable[[], bool], timeout_s: float = 5.0) -> bool:
    """Whether `condition` comes true within `timeout_s` (asked every 20 ms)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def wait_until(check: Callable[[], bool], timeout_s: float, what: str, service: Service | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        if service is not None and service.process.poll() is not None:
            raise AssertionError(f"{service.name} exited ({service.process.returncode}) waiting for {what}:\n"
                                 f"{service.log_tail()}")
        try:
            if check():
                return
        except (httpx.TransportError, OSError):
            pass
        if time.monotonic() > deadline:
            tail = f":\n{service.log_tail()}" if service else ""
            raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}{tail}")
        time.sleep(0.2)


def http_ok(url: str, **kwargs) -> Callable[[], bool]:  # type: ignore[no-untyped-def]
    return lambda: httpx.get(url, timeout=2, **kwargs).status_code == 200


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
