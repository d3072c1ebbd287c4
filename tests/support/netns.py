"""Hosts for multi-host tests: Linux network namespaces joined by veth links, each with its own
addresses, made by the test and always removed (every process left inside is killed first).

No link touches the machine's own namespace, so nothing a test starts is reachable from outside
its namespaces, and their addresses never meet the machine's. Needs root and iproute2
(installed with apt-get when missing, as scripts/setup does).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def ensure_iproute2() -> str:
    ip = shutil.which("ip") or shutil.which("ip", path="/usr/sbin:/sbin:/usr/bin")
    if ip is None:
        subprocess.run(["apt-get", "install", "-y", "-qq", "iproute2"], check=True, capture_output=True,
                       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        ip = shutil.which("ip") or "/usr/sbin/ip"
    return ip


def _run(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([ensure_iproute2(), *argv], capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(argv)}: {done.stderr.strip()}")
    return done


@dataclass
class Host:
    """One network namespace: a host with its own interfaces, addresses and port space."""

    name: str
    addresses: list[str] = field(default_factory=list)

    def argv(self, *command: str) -> list[str]:
        return [ensure_iproute2(), "netns", "exec", self.name, *command]

    def run(self, *command: str, env: dict[str, str] | None = None, timeout: float = 600,
            cwd: Path | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv(*command), capture_output=True, text=True, timeout=timeout, check=False,
                              env=env, cwd=cwd)

    def python(self, code: str, *args: str, env: dict[str, str] | None = None,
               timeout: float = 300) -> subprocess.CompletedProcess:
        """Run `code` with the project's interpreter inside this host (secrets go in `env`)."""
        environment = {**os.environ, **(env or {})}
        return self.run(sys.executable, "-c", code, *args, env=environment, timeout=timeout)

    def stackctl(self, stack_dir: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
        environment = {**os.environ, "COLUMNS": "200"}
        environment.pop("STACKCTL_DIR", None)
        return self.run(sys.executable, "-m", "stackctl", "-C", str(stack_dir), *args, env=environment,
                        timeout=timeout, cwd=REPO)

    def connect(self, address: str, port: int, timeout_s: float = 2.0) -> str:
        """'open', 'refused', 'unreachable' or 'timeout': what a TCP connect from here meets."""
        code = (
            "import socket, sys, errno\n"
            "try:\n"
            f"    socket.create_connection(({address!r}, {port}), timeout={timeout_s}).close(); print('open')\n"
            "except ConnectionRefusedError: print('refused')\n"
            "except TimeoutError: print('timeout')\n"
            "except OSError as e: print('unreachable' if e.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH) else repr(e))\n"
        )
        return self.python(code, timeout=30).stdout.strip()

    def listeners(self) -> list[str]:
        """`ss -ltn` local addresses (ADDRESS:PORT) listening inside this host."""
        done = self.run("ss", "-Hltn")
        return [line.split()[3] for line in done.stdout.splitlines() if len(line.split()) > 3]

    def pids(self) -> list[int]:
        done = _run("netns", "pids", self.name, check=False)
        return [int(pid) for pid in done.stdout.split() if pid.isdigit()]

    def kill_all(self) -> None:
        """SIGKILL every process inside this host (they were all started by the test in it)."""
        for _ in range(5):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.3)


class Lab:
    """The namespaces and links one test made; `close` kills what runs inside and removes them."""

    def __init__(self, tag: str) -> None:
        self.tag = f"{tag}{os.getpid() % 100000}"
        self.hosts: list[Host] = []
        self._links = 0

    def host(self, short: str) -> Host:
        host = Host(f"sct-{self.tag}-{short}")
        _run("netns", "add", host.name)
        self.hosts.append(host)
        _run("-n", host.name, "link", "set", "lo", "up")
        return host

    def link(self, a: Host, a_address: str, b: Host, b_address: str, prefix: int = 24) -> None:
        """A cable between two hosts: a veth pair, one end in each, with these addresses."""
        self._links += 1
        left, right = f"v{self.tag}{self._links}a"[-15:], f"v{self.tag}{self._links}b"[-15:]
        _run("link", "add", left, "type", "veth", "peer", "name", right)
        for end, host, address in ((left, a, a_address), (right, b, b_address)):
            _run("link", "set", end, "netns", host.name)
            _run("-n", host.name, "addr", "add", f"{address}/{prefix}", "dev", end)
            _run("-n", host.name, "link", "set", end, "up")
            host.addresses.append(address)

    def interface_of(self, host: Host, address: str) -> str:
        done = _run("-n", host.name, "-j", "addr", "show")
        for interface in json.loads(done.stdout):
            if any(info.get("local") == address for info in interface.get("addr_info", [])):
                return str(interface["ifname"])
        raise AssertionError(f"{address} is on no interface of {host.name}")

    def close(self) -> None:
        for host in reversed(self.hosts):
            host.kill_all()
            _run("netns", "del", host.name, check=False)
        self.hosts.clear()


@contextmanager
def lab(tag: str) -> Iterator[Lab]:
    made = Lab(tag)
    try:
        yield made
    finally:
        made.close()
