"""Health gates: is a service serving, not merely running."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from stackctl.services import HealthGate

POLL_INTERVAL_S = 1.0
# A command gate (connecting to Ray) may take a few seconds; longer means it hangs.
COMMAND_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class ProbeResult:
    healthy: bool
    detail: str


def probe(gate: HealthGate, *, api_key: str | None = None, served_name: str | None = None) -> ProbeResult:
    """One check. For vLLM, /health answering is not enough: the first real forward pass is
    where kernel and memory failures show up, so a one-token completion must succeed too."""
    if gate.probe == "command":
        return _probe_command(gate)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        with httpx.Client(timeout=httpx.Timeout(30.0, connect=2.0), trust_env=False) as client:
            response = client.get(gate.url, headers=headers)
            if response.status_code >= 400:
                return ProbeResult(False, f"{gate.url} answered {response.status_code}")
            if gate.probe != "vllm":
                return ProbeResult(True, f"{gate.url} answered {response.status_code}")
            base = gate.url.rsplit("/health", 1)[0]
            completion = client.post(
                f"{base}/v1/completions",
                headers=headers,
                json={"model": served_name, "prompt": "ping", "max_tokens": 1, "temperature": 0},
                timeout=120.0,
            )
            if completion.status_code != 200:
                return ProbeResult(False, f"one-token completion answered {completion.status_code}: {completion.text[:200]}")
            return ProbeResult(True, "serves completions")
    except httpx.HTTPError as error:
        return ProbeResult(False, f"{gate.url}: {type(error).__name__}")


def _probe_command(gate: HealthGate) -> ProbeResult:
    """A gate only a program can answer (the Ray cluster's nodes and GPUs): healthy on exit 0;
    the detail is its last output line (a JSON line's `detail`, if it prints one)."""
    try:
        done = subprocess.run(list(gate.command), capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return ProbeResult(False, f"{gate.url}: {type(error).__name__}")
    lines = (done.stdout.strip() or done.stderr.strip() or f"exit {done.returncode}").splitlines()
    detail = lines[-1]
    try:
        detail = str(json.loads(detail)["detail"])
    except (ValueError, KeyError, TypeError):
        pass
    return ProbeResult(done.returncode == 0, detail)


def wait_until_healthy(
    gate: HealthGate,
    timeout_s: float,
    *,
    is_alive: Callable[[], bool] = lambda: True,
    on_tick: Callable[[float, ProbeResult], None] | None = None,
    api_key: str | None = None,
    served_name: str | None = None,
    confirm: Callable[[], ProbeResult] | None = None,
) -> ProbeResult:
    """Poll until healthy, the process dies (`is_alive` false) or `timeout_s` passes; returns the
    last check's result. `confirm` (e.g. Docker's healthcheck verdict) must also pass once the
    probe does."""
    started = time.monotonic()
    result = ProbeResult(False, "not probed yet")
    while True:
        elapsed = time.monotonic() - started
        if not is_alive():
            return ProbeResult(False, "the process exited")
        result = probe(gate, api_key=api_key, served_name=served_name)
        if result.healthy and confirm is not None:
            confirmed = confirm()
            if not confirmed.healthy:
                result = ProbeResult(False, f"{result.detail}; waiting for {confirmed.detail}")
        if on_tick:
            on_tick(elapsed, result)
        if result.healthy:
            return result
        if time.monotonic() - started >= timeout_s:
            return result  # the last check says why
        time.sleep(POLL_INTERVAL_S)
