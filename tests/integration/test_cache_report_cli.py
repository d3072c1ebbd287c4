"""`stackctl cache-report` against a running filter-proxy: the real CLI, in a stack directory
`init --demo` made, asks the stack's proxy (started on the stack's proxy port with the stack's
.env, in front of the scripted backend) over its admin API, with the backend key from .env."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from stackctl.envfile import read_env
from tests.support.proxy.running import served
from tests.support.proxy.scripted_backend import ScriptedBackend
from tests.support.stacks import DemoStack, make_demo_stack

pytestmark = pytest.mark.integration

SYSTEM = "You are a careful coding agent.\nNow: {now}\nAnswer briefly."


@pytest.fixture(scope="module")
def stack_with_proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoStack]:
    stack = make_demo_stack(tmp_path_factory.mktemp("cache-report") / "stack")
    env = read_env(stack.root / ".env")
    for backend, url in served(ScriptedBackend()):
        proxy_env = {**os.environ, "VLLM_API_KEY": env["VLLM_API_KEY"], "STACKCTL_PROXY_KEYS": env["STACKCTL_PROXY_KEYS"],
                     "STACKCTL_PROXY_LOG_LEVEL": "warning"}
        process = subprocess.Popen(
            [sys.executable, "-m", "stackctl", "filter-proxy", "serve", "--backend", url, "--port",
             str(stack.ports["proxy"]), "--default-model", "qwen3-coder", "--search-backend", "off"],
            env=proxy_env, stdin=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(f"http://127.0.0.1:{stack.ports['proxy']}/health", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert process.poll() is None and time.monotonic() < deadline, "the filter-proxy did not start"
                time.sleep(0.2)
            yield stack
        finally:
            process.terminate()
            process.wait(10)


def converse(stack: DemoStack, marker: str, times: list[str]) -> None:
    """A client whose system prompt carries the time: every turn breaks the prefix there."""
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{stack.ports['proxy']}/v1", api_key=stack.client_key,
                           max_retries=0, timeout=20)
    history: list[dict] = [{"role": "user", "content": f"{marker} hello"}]
    for now in times:
        client.chat.completions.create(model="any", max_tokens=8,
                                       messages=[{"role": "system", "content": SYSTEM.format(now=now)}, *history])
        history += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "more"}]


def test_the_report_names_the_break_and_the_capture_shows_the_diff(stack_with_proxy: DemoStack) -> None:
    stack = stack_with_proxy
    converse(stack, uuid.uuid4().hex, ["09:15:00", "09:16:30"])
    done = stack.cli("cache-report")
    assert done.returncode == 0, done.stdout + done.stderr
    byte = SYSTEM.index("{now}")
    assert f"turn 2: messages[0] (system).content changed at byte {byte}: a time of day" in done.stdout
    assert "key default" in done.stdout and "2 turns" in done.stdout and "1 break" in done.stdout
    assert stack.client_key not in done.stdout + done.stderr
    started = stack.cli("cache-report", "--capture", "--minutes", "5")
    assert started.returncode == 0, started.stdout + started.stderr
    assert "capturing prompts until" in started.stdout
    converse(stack, uuid.uuid4().hex, ["10:00:00", "10:00:05"])
    shown = stack.cli("cache-report", "--capture", "-n", "1")
    assert "-Now: 10:00:00\n+Now: 10:00:05\n" in shown.stdout, shown.stdout
    exact = byte + len("10:00:0")  # with the prompts at hand, the very byte
    assert f"turn 2: messages[0] (system).content changed at byte {exact}: a time of day" in shown.stdout
    stopped = stack.cli("cache-report", "--stop-capture")
    assert stopped.returncode == 0 and "captured prompts deleted" in stopped.stdout


def test_a_stack_whose_proxy_is_down_says_so(tmp_path: Path) -> None:
    stack = make_demo_stack(tmp_path / "down")
    done = stack.cli("cache-report")
    assert done.returncode == 1
    assert f"the filter-proxy at 127.0.0.1:{stack.ports['proxy']} does not answer" in done.stderr
    assert "Traceback" not in done.stderr
