"""`python -m stackctl.proxy serve` as a real process: it starts, serves, keeps secrets out
of its output, and refuses bad input with one line and exit code 2."""

from __future__ import annotations

import os
import subprocess
import sys

import httpx
import pytest

from tests.support.processes import free_port
from tests.support.proxy.servers import wait_until_healthy

pytestmark = pytest.mark.integration

CLIENT_KEY = "sk-test-client-5f5f5f5f"
BACKEND_KEY = "vk-test-backend-7e7e7e7e"


def test_serve_runs_and_never_prints_secrets() -> None:
    port = free_port()
    env = {
        **os.environ,
        "STACKCTL_PROXY_KEYS": f"ci={CLIENT_KEY}",
        "VLLM_API_KEY": BACKEND_KEY,
        "STACKCTL_PROXY_LOG_LEVEL": "debug",
    }
    command = [
        sys.executable,
        "-m",
        "stackctl.proxy",
        "serve",
        "--port",
        str(port),
        "--backend",
        f"http://127.0.0.1:{free_port()}",
        "--alias",
        "claude-*=m",
    ]
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_healthy(base, process)
        request = {
            "model": "claude-x",
            "max_tokens": 5,
            "messages": [{"role": "user", "content": "hi"}],
        }
        assert (
            httpx.post(
                base + "/v1/messages", json=request, headers={"x-api-key": "wrong"}
            ).status_code
            == 401
        )
        down = httpx.post(base + "/v1/messages", json=request, headers={"x-api-key": CLIENT_KEY})
        assert down.status_code == 529
    finally:
        process.terminate()
        output, _ = process.communicate(timeout=20)
    assert "1 API key(s): ci" in output
    assert CLIENT_KEY not in output and BACKEND_KEY not in output
    assert "Traceback" not in output


def test_limit_flags_reach_the_running_proxy() -> None:
    """The flags LimitOptions lists become the CLI's: a key's own override beats the default."""
    port = free_port()
    env = {**os.environ, "STACKCTL_PROXY_KEYS": f"ci={CLIENT_KEY}"}
    command = [
        sys.executable, "-m", "stackctl.proxy", "serve", "--port", str(port),
        "--backend", f"http://127.0.0.1:{free_port()}",
        "--requests-per-minute", "5", "--key-limit", "ci:requests_per_minute=1",
    ]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_healthy(base, process)
        request = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
        headers = {"x-api-key": CLIENT_KEY}
        assert httpx.post(base + "/v1/messages", json=request, headers=headers).status_code == 529
        refused = httpx.post(base + "/v1/messages", json=request, headers=headers)
        assert refused.status_code == 429 and "1 requests per minute" in refused.text
        assert int(refused.headers["retry-after"]) > 0
    finally:
        process.terminate()
        process.communicate(timeout=20)


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        ([], {"STACKCTL_PROXY_KEYS": ""}, "no API keys"),
        (["--no-auth", "--alias", "nonsense"], {}, "bad --alias 'nonsense'"),
        (["--keys-file", "/nonexistent/keys"], {}, "cannot read keys file"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    args: list[str], env: dict[str, str], message: str
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "stackctl.proxy", "serve", "--backend", "http://127.0.0.1:9", *args],
        env={**os.environ, "STACKCTL_PROXY_KEYS": "", **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.strip().startswith("error: ") and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""


def test_stack_yaml_limits_reach_a_running_proxy(scripted_backend) -> None:  # type: ignore[no-untyped-def]
    from stackctl.config import parse_stack_config
    from stackctl.template_values import limit_args

    # Two workers (stack.yaml's proxy.workers): the per-minute limit is still one.
    config = parse_stack_config(
        {
            "limits": {"max_concurrent": 4, "keys": {"ci": {"requests_per_minute": 1}}},
            "proxy": {"workers": 2},
        }
    )
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "stackctl.proxy",
        "serve",
        "--port",
        str(port),
        "--backend",
        scripted_backend[1],
        "--default-model",
        "qwen3-coder",
        *limit_args(config),
        "--workers",
        str(config.proxy.workers),
    ]
    env = {**os.environ, "STACKCTL_PROXY_KEYS": f"ci={CLIENT_KEY}"}
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_healthy(base, process)
        request = {"model": "m", "messages": [{"role": "user", "content": "scenario:text"}]}
        headers = {"authorization": f"Bearer {CLIENT_KEY}"}
        assert (
            httpx.post(base + "/v1/chat/completions", json=request, headers=headers).status_code
            == 200
        )
        refused = httpx.post(base + "/v1/chat/completions", json=request, headers=headers)
        assert refused.status_code == 429 and "1 requests per minute" in refused.text
    finally:
        process.terminate()
        process.communicate(timeout=20)

    # A stack.yaml override naming a key the proxy does not have stops it at start, saying so.
    result = subprocess.run(
        command,
        env={**env, "STACKCTL_PROXY_KEYS": f"dev={CLIENT_KEY}"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "limits are set for key 'ci', but no API key has that name (keys: dev)" in result.stderr
