"""`stackctl filter-proxy serve` as a process of its own, on a free loopback port, for benchmarks
and the GPU check: one client key, one placement of Claude Code's inline system messages, stopped
when the block ends."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

START_TIMEOUT_S = 60


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def proxy_process(backend_url: str, backend_key: str | None, *, client_key: str, model: str, placement: str,
                  work: Path, stackctl: list[str] | None = None) -> Iterator[str]:
    """Yields the proxy's base URL; its log is work/proxy-PLACEMENT.log."""
    port = free_port()
    env = {**os.environ, "VLLM_API_KEY": backend_key or "", "STACKCTL_PROXY_KEYS": f"bench={client_key}",
           "STACKCTL_PROXY_LOG_LEVEL": "warning"}
    argv = [*(stackctl or [sys.executable, "-m", "stackctl"]), "filter-proxy", "serve", "--backend", backend_url,
            "--port", str(port), "--default-model", model, "--search-backend", "off", "--system-placement", placement]
    log_path = work / f"proxy-{placement}.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                if httpx.get(url + "/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                sys.exit(f"the proxy did not start: {log_path.read_text()[-2000:]}")
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(10)
