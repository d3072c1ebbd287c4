"""Start the real vLLM CPU engine with the tiny demo model on a free loopback port, and stop it.

Used by the session-scoped `real_vllm` fixture; kept free of pytest so a failure is a plain
StackError whose message the fixture turns into a test failure.
"""

import os
import secrets
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from stackctl.engine import (
    default_demo_model_dir,
    default_engine_dir,
    engine_python,
    generate_demo_model,
    install_engine,
    vllm_cpu_command,
    vllm_cpu_env,
)
from stackctl.errors import ServiceFailed
from tests.support.processes import free_port

SERVED_NAME = "tiny"
# Healthy in ~25 s on an idle 2-core machine; leave room for a loaded CI box.
START_TIMEOUT_S = 300.0
STOP_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class VllmServer:
    base_url: str  # http://127.0.0.1:PORT, without /v1
    model: str  # the served model name
    api_key: str | None  # what clients must send as a Bearer token (vLLM reads VLLM_API_KEY)
    pid: int
    log_path: Path


@contextmanager
def running_vllm(
    log_dir: Path, *, extra_args: tuple[str, ...] = (), max_model_len: int | None = None
) -> Iterator[VllmServer]:
    """Ensure engine and demo model (cached in $STACKCTL_HOME), serve, yield, always stop."""
    engine_dir = default_engine_dir()
    install_engine(engine_dir)
    model_dir = generate_demo_model(engine_python(engine_dir), default_demo_model_dir())

    port = free_port()
    api_key = secrets.token_urlsafe(16)
    argv = vllm_cpu_command(
        engine_dir,
        model_dir,
        port=port,
        served_name=SERVED_NAME,
        # As a stack runs it (vllm_args): tool calls parsed, cached prompt tokens in usage.
        extra_args=("--enable-auto-tool-choice", "--tool-call-parser", "hermes", "--enable-prompt-tokens-details",
                    *extra_args),
        **({"max_model_len": max_model_len} if max_model_len else {}),
    )
    log_path = log_dir / "vllm.log"
    with open(log_path, "wb") as log:
        # A session of its own, so stopping kills vLLM's engine-core child too.
        proc = subprocess.Popen(
            argv,
            env=vllm_cpu_env(api_key=api_key),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = VllmServer(f"http://127.0.0.1:{port}", SERVED_NAME, api_key, proc.pid, log_path)
    try:
        _wait_until_serving(proc, server)
        yield server
    finally:
        _stop(proc)


def _wait_until_serving(proc: subprocess.Popen, server: VllmServer) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    with httpx.Client(timeout=5.0) as client:
        while True:
            if proc.poll() is not None:
                raise ServiceFailed(
                    f"vLLM exited with code {proc.returncode} while starting; "
                    f"last log lines:\n{_log_tail(server.log_path)}"
                )
            try:
                if client.get(f"{server.base_url}/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise ServiceFailed(
                    f"vLLM did not become healthy in {START_TIMEOUT_S:.0f} s; "
                    f"last log lines:\n{_log_tail(server.log_path)}"
                )
            time.sleep(0.5)
        # /health turns 200 once the engine is up; one real token proves the whole path works.
        reply = client.post(
            f"{server.base_url}/v1/chat/completions",
            headers={"Authorization": f"Bearer {server.api_key}"},
            json={
                "model": server.model,
                "messages": [{"role": "user", "content": "hi"}],
                "max_tokens": 1,
            },
            timeout=60.0,
        )
        if reply.status_code != 200:
            raise ServiceFailed(
                f"vLLM is healthy but a 1-token completion failed ({reply.status_code}: "
                f"{reply.text[:300]}); last log lines:\n{_log_tail(server.log_path)}"
            )


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    _signal_group(proc.pid, signal.SIGTERM)
    try:
        proc.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pass
    # SIGKILL the group even after a clean exit of the leader: a straggling child (the engine
    # core) would otherwise keep its memory and pinned core past the test session.
    _signal_group(proc.pid, signal.SIGKILL)
    proc.wait()


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def _log_tail(log_path: Path, lines: int = 30) -> str:
    try:
        text = log_path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])
