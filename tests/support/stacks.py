"""Demo stacks for end-to-end tests: a stack directory on free ports, driven by the real CLI."""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from pathlib import Path

import yaml

from stackctl.envfile import read_env
from tests.support.cli import run_cli


def free_ports(count: int) -> list[int]:
    sockets, ports = [], []
    for _ in range(count):
        handle = socket.socket()
        handle.bind(("127.0.0.1", 0))
        sockets.append(handle)
        ports.append(handle.getsockname()[1])
    for handle in sockets:
        handle.close()
    return ports


@dataclass(frozen=True)
class DemoStack:
    root: Path
    ports: dict[str, int]

    def cli(self, *args: str, timeout: float = 900):
        return run_cli(*args, cwd=self.root, timeout=timeout)

    @property
    def client_key(self) -> str:
        first = read_env(self.root / ".env")["STACKCTL_PROXY_KEYS"].split(",")[0]
        return first.split("=", 1)[1]

    def pid_records(self) -> dict[str, dict]:
        pids = self.root / ".stackctl" / "pids"
        return {path.stem: json.loads(path.read_text()) for path in pids.glob("*.json")} if pids.exists() else {}


def make_demo_stack(root: Path, **overrides) -> DemoStack:
    """`stackctl init --demo`, then every port moved to a free one (tests run beside other stacks)."""
    root.mkdir(parents=True, exist_ok=True)
    result = run_cli("init", "--demo", cwd=root)
    assert result.returncode == 0, result.stderr
    names = ["vllm", "proxy", "prometheus", "grafana", "node_exporter", "gpu_exporter", "http", "https"]
    ports = dict(zip(names, free_ports(len(names))))
    stack_file = root / "stack.yaml"
    config = yaml.safe_load(stack_file.read_text())
    config["ports"] = ports
    config.update(overrides)
    stack_file.write_text(yaml.safe_dump(config))
    return DemoStack(root, ports)


def process_alive(pid: int) -> bool:
    """Running and not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def group_members(pgid: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
                members.append(int(entry.name))
    return members
