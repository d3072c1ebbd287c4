"""Demo stacks for end-to-end tests: a stack directory on free ports, driven by the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import yaml

from stackctl.envfile import read_env
from tests.support.cli import run_cli
from tests.support.local_images import LocalImages
from tests.support.processes import free_ports


@dataclass(frozen=True)
class DemoStack:
    root: Path
    ports: dict[str, int]

    def cli(self, *args: str, timeout: float = 900):
        return run_cli(*args, cwd=self.root, timeout=timeout)

    def cli_argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "stackctl", *args]

    def cli_env(self) -> dict[str, str]:
        environment = {**os.environ, "COLUMNS": "200"}
        environment.pop("STACKCTL_DIR", None)
        return environment

    @property
    def project(self) -> str:
        return yaml.safe_load((self.root / "stack.yaml").read_text()).get("project", "stackctl")

    @property
    def client_key(self) -> str:
        first = read_env(self.root / ".env")["STACKCTL_PROXY_KEYS"].split(",")[0]
        return first.split("=", 1)[1]

    @contextmanager
    def running(self, timeout: float = 900) -> Iterator[str]:
        """`up` (it must succeed; what it printed is yielded), then `down` whatever happened."""
        try:
            result = self.cli("up", timeout=timeout)
            assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
            yield result.stdout
        finally:
            self.cli("down")

    def wait_for_prometheus_targets(self, jobs: set[str], timeout_s: float) -> dict[str, str]:
        """Wait until this stack's Prometheus scrapes every job in `jobs` and each is up; job -> `up`."""
        url = f"http://127.0.0.1:{self.ports['prometheus']}/api/v1/query"
        deadline = time.monotonic() + timeout_s
        while True:
            results = httpx.get(url, params={"query": "up"}).json()["data"]["result"]
            found = {result["metric"]["job"]: result["value"][1] for result in results}
            if set(found) >= jobs and set(found.values()) == {"1"}:
                return found
            assert time.monotonic() < deadline, f"targets not all up: {found}"
            time.sleep(2)

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


def make_compose_stack(root: Path, local: LocalImages, **overrides) -> DemoStack:
    """The demo stack under Compose, in a project of its own, with the local stand-in images and
    the build arguments that build stackctl's own images from the local base."""
    settings = {
        "runtime": "compose",
        "project": f"e2e-{uuid.uuid4().hex[:8]}",
        "images": {**local.stand_ins, **overrides.pop("images", {})},
        "build_args": local.build_args,
    }
    return make_demo_stack(root, **settings, **overrides)


def compose_ps(stack: DemoStack) -> dict[str, dict]:
    """`docker compose ps -a` run in the stack directory, as a user would, without stackctl."""
    done = subprocess.run(["docker", "compose", "ps", "-a", "--format", "json"], cwd=stack.root, capture_output=True,
                          text=True, check=True)
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return {row["Service"]: row for row in rows}


def project_containers(stack: DemoStack) -> list[str]:
    """Every container (any state) labelled with the stack's Compose project."""
    done = subprocess.run(["docker", "ps", "-a", "--format", "{{.Names}}", "--filter",
                           f"label=com.docker.compose.project={stack.project}"], capture_output=True, text=True,
                          check=True)
    return done.stdout.split()


def remove_compose_project(stack: DemoStack) -> None:
    """Test cleanup beyond `stackctl down`: the project's volumes too, so runs do not pile up."""
    subprocess.run(["docker", "compose", "down", "-v", "--remove-orphans"], cwd=stack.root, capture_output=True,
                   check=False)
