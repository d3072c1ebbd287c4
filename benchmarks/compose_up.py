"""What `stackctl up` costs under Compose, beyond the engine's own load time.

One command, one table, on the CPU demo stack in a real Docker engine (the tests' engine: the one
at DOCKER_HOST, else a private dockerd with its cached data root):

- (a) `stackctl up` from no containers: every image present, every service started in order
  behind its gate (Docker's healthcheck verdict and stackctl's probe, vLLM's one-token completion);
- (b) the baseline, plain `docker compose up -d --wait` on the same rendered file: Compose starts
  the services by their depends_on and waits for its own healthchecks;
- vLLM's own load time in each (its container's start to its "Application startup complete."),
  so the table shows what each way adds on top of the engine.

It also prints the disk the stack's images take. The first run builds the images (minutes).

    .venv/bin/python benchmarks/compose_up.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.docker_engine import docker_engine
from tests.support.local_images import prepare_local_images
from tests.support.stacks import compose_ps, make_compose_stack, remove_compose_project


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2, help="alternating (a)/(b) rounds")
    options = parser.parse_args()
    import os

    with docker_engine() as engine, tempfile.TemporaryDirectory(prefix="compose-bench-") as work:
        os.environ["DOCKER_HOST"] = engine.host
        print(f"engine: {engine.host} ({'private' if engine.private else 'existing'})")
        began = time.monotonic()
        images = prepare_local_images(Path(work))
        print(f"local base and stand-in images ready in {time.monotonic() - began:.1f} s")
        stack = make_compose_stack(Path(work) / "stack", images)
        try:
            began = time.monotonic()
            warm = stack.cli("up", timeout=3600)
            if warm.returncode != 0:
                sys.exit(f"`stackctl up` failed:\n{warm.stdout[-2000:]}{warm.stderr[-2000:]}")
            print(f"first `stackctl up` (builds missing images): {time.monotonic() - began:.1f} s")
            print_image_disk(stack)
            stack.cli("down")
            rows = {"(a) stackctl up": [], "(b) docker compose up --wait": []}
            for _ in range(options.rounds):
                rows["(a) stackctl up"].append(timed(stack, lambda: stack.cli("up", timeout=1800).returncode == 0))
                stack.cli("down")
                rows["(b) docker compose up --wait"].append(timed(stack, lambda: compose_up_wait(stack)))
                subprocess.run(["docker", "compose", "down"], cwd=stack.root, capture_output=True, check=False)
            print_table(rows)
        finally:
            stack.cli("down")
            remove_compose_project(stack)


def timed(stack, start) -> tuple[float, float]:
    """(seconds until every service is up, seconds vLLM itself took to load)."""
    began = time.monotonic()
    if not start():
        sys.exit("a start failed; see `stackctl status`")
    total = time.monotonic() - began
    return total, vllm_load_seconds(stack)


def compose_up_wait(stack) -> bool:
    done = subprocess.run(["docker", "compose", "up", "-d", "--wait", "--no-build", "--pull", "never"],
                          cwd=stack.root, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(done.stderr[-2000:])
    return done.returncode == 0


def vllm_load_seconds(stack) -> float:
    container = compose_ps(stack)["vllm"]["ID"]
    state = json.loads(subprocess.run(["docker", "inspect", container], capture_output=True, text=True,
                                      check=True).stdout)[0]["State"]
    started = parse_time(state["StartedAt"])
    logs = subprocess.run(["docker", "logs", "-t", container], capture_output=True, text=True, check=True)
    for line in (logs.stdout + logs.stderr).splitlines():
        if "Application startup complete" in line:
            return (parse_time(line.split()[0]) - started).total_seconds()
    return float("nan")


def parse_time(stamp: str) -> datetime:
    # Docker's RFC 3339 with nanoseconds: keep microseconds for fromisoformat.
    head, _, rest = stamp.rstrip("Z").partition(".")
    return datetime.fromisoformat(f"{head}.{(rest + '000000')[:6]}+00:00")


def print_image_disk(stack) -> None:
    services = json.loads(subprocess.run(["docker", "compose", "config", "--format", "json"], cwd=stack.root,
                                         capture_output=True, text=True, check=True).stdout)["services"]
    print("images (docker image inspect, uncompressed):")
    total = 0
    for image in sorted({service["image"] for service in services.values()}):
        size = int(subprocess.run(["docker", "image", "inspect", "--format", "{{.Size}}", image], capture_output=True,
                                  text=True, check=True).stdout.strip())
        total += size
        print(f"  {image:60} {size / 1e9:6.2f} GB")
    print(f"  {'sum (shared layers counted once per image)':60} {total / 1e9:6.2f} GB")
    print(subprocess.run(["docker", "system", "df"], capture_output=True, text=True, check=False).stdout)


def print_table(rows: dict[str, list[tuple[float, float]]]) -> None:
    print(f"{'':32} {'up (s)':>8} {'vLLM load (s)':>14} {'added (s)':>10} {'ratio to (b)':>13}")
    baseline = statistics.median(total for total, _ in rows["(b) docker compose up --wait"])
    for name, samples in rows.items():
        total = statistics.median(t for t, _ in samples)
        load = statistics.median(load for _, load in samples)
        print(f"{name:32} {total:8.1f} {load:14.1f} {total - load:10.1f} {total / baseline:13.2f}")


if __name__ == "__main__":
    main()
