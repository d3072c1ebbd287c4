"""Faults lose nothing and leave no zombie: a backend killed mid-stream, a slow reader."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest

from tests.support.processes import eventually, free_port
from tests.support.proxy.cut_streams import StreamsUnderFire, assert_ended_with_an_api_error
from tests.support.proxy.running import ALICE_KEY, RunningProxy
from tests.support.proxy.scripted_backend import FLOOD_BYTES, ScriptedBackend
from tests.support.proxy.servers import wait_until_healthy

pytestmark = pytest.mark.integration

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))


class BackendProcess:
    """The scripted backend as a process of its own, so it can die the way vLLM dies."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = [sys.executable, "-m", "tests.support.proxy.scripted_backend", str(self.port)]
        self.process = subprocess.Popen(command, cwd=REPO)
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx.get(self.url + "/v1/models").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            assert self.process.poll() is None and time.monotonic() < deadline, "no backend"
            time.sleep(0.05)

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)


@pytest.fixture
def killable_backend() -> Iterator[BackendProcess]:
    backend = BackendProcess(free_port())
    backend.start()
    try:
        yield backend
    finally:
        if backend.process is not None and backend.process.poll() is None:
            backend.kill()


def in_flight(proxy: RunningProxy) -> dict[str, float]:
    text = httpx.get(proxy.base_url + "/metrics").text
    found = re.findall(r'^stackctl_proxy_in_flight\{route="([^"]+)"\} (\S+)$', text, re.MULTILINE)
    return {route: float(value) for route, value in found}


def nothing_in_flight(proxy: RunningProxy) -> bool:
    """The proxy ends a request just after its last byte: give it a moment."""
    deadline = time.monotonic() + 5
    while set(in_flight(proxy).values()) != {0.0}:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_backend_killed_mid_stream_ends_streams_properly_and_the_next_request_works(
    start_proxy, base_settings, killable_backend: BackendProcess
) -> None:  # type: ignore[no-untyped-def]
    proxy = start_proxy(replace(base_settings, backend_url=killable_backend.url))
    anthropic_body = {
        "model": "claude-x",
        "max_tokens": 9,
        "stream": True,
        "messages": [{"role": "user", "content": "scenario:hang"}],
    }
    openai_body = {
        "model": "gpt-4o",
        "stream": True,
        "messages": [{"role": "user", "content": "scenario:hang"}],
    }
    received: dict[str, str] = {}
    flowing = threading.Barrier(3)

    def stream(path: str, body: dict[str, object]) -> None:
        with httpx.stream(
            "POST", proxy.base_url + path, json=body, headers={"x-api-key": ALICE_KEY}, timeout=20
        ) as response:
            chunks = response.iter_text()
            text = next(chunks)
            flowing.wait()
            received[path] = text + "".join(chunks)  # to the end, however it ends

    threads = [
        threading.Thread(target=stream, args=("/v1/messages", anthropic_body)),
        threading.Thread(target=stream, args=("/v1/chat/completions", openai_body)),
    ]
    for thread in threads:
        thread.start()
    flowing.wait(timeout=10)  # both streams are flowing: now vLLM "crashes"
    killable_backend.kill()
    for thread in threads:
        thread.join(timeout=20)

    anthropic_events = re.findall(r"^event: (\w+)$", received["/v1/messages"], re.MULTILINE)
    assert "content_block_delta" in anthropic_events and anthropic_events[-1] == "error"
    last_data = received["/v1/messages"].strip().splitlines()[-1].removeprefix("data: ")
    assert json.loads(last_data)["error"]["type"] == "api_error"
    assert "stopped mid-reply" in last_data
    openai_last = received["/v1/chat/completions"].strip().splitlines()[-1]
    error = json.loads(openai_last.removeprefix("data: "))["error"]
    assert "stopped mid-reply" in error["message"] and error["type"] == "server_error"
    assert nothing_in_flight(proxy), in_flight(proxy)

    # Down: a clear, retryable answer. Back up: the very next request works.
    down = httpx.post(
        proxy.base_url + "/v1/messages",
        json={**anthropic_body, "stream": False},
        headers={"x-api-key": ALICE_KEY},
    )
    assert down.status_code == 529 and "not reachable" in down.text
    killable_backend.start()
    for path, body in (("/v1/messages", anthropic_body), ("/v1/chat/completions", openai_body)):
        for stream_it in (False, True):
            text_body = {
                **body,
                "stream": stream_it,
                "messages": [{"role": "user", "content": "scenario:text"}],
            }
            reply = httpx.post(
                proxy.base_url + path, json=text_body, headers={"x-api-key": ALICE_KEY}
            )
            assert reply.status_code == 200, (path, stream_it, reply.text[:300])
    assert nothing_in_flight(proxy), in_flight(proxy)


def test_the_sdks_raise_the_apis_error_when_the_backend_dies_mid_stream(
    start_proxy, base_settings, killable_backend: BackendProcess
) -> None:  # type: ignore[no-untyped-def]
    proxy = start_proxy(replace(base_settings, backend_url=killable_backend.url))
    streams = StreamsUnderFire(proxy.anthropic(), proxy.openai(), model="claude-x", prompt="scenario:hang",
                               max_tokens=9)
    streams.start(timeout_s=20)
    killable_backend.kill()
    assert_ended_with_an_api_error(*streams.outcomes(timeout_s=20))
    assert nothing_in_flight(proxy), in_flight(proxy)


def test_a_backend_that_stalls_mid_reply_ends_the_streams_with_the_apis_error(
    start_proxy, base_settings, backend: ScriptedBackend
) -> None:  # type: ignore[no-untyped-def]
    # The read timeout (900 s by default; 1 s here) counts silence, not the reply's length.
    proxy = start_proxy(replace(base_settings, backend_read_timeout_s=1.0))
    reply = httpx.post(
        proxy.base_url + "/v1/chat/completions",
        json={"model": "gpt-4o", "stream": True,
              "messages": [{"role": "user", "content": "scenario:text pace=0.15"}]},
        headers={"x-api-key": ALICE_KEY},
        timeout=20,
    )
    assert reply.text.endswith("data: [DONE]\n\n"), reply.text[-300:]  # 2.7 s, never 1 s silent
    stalled = backend.disconnects.count("stall")
    streams = StreamsUnderFire(proxy.anthropic(), proxy.openai(), model="claude-x",
                               prompt="scenario:text stall=4", max_tokens=9)
    streams.start(timeout_s=20)
    anthropic_outcome, openai_outcome = streams.outcomes(timeout_s=20)
    assert_ended_with_an_api_error(anthropic_outcome, openai_outcome)
    assert "Timeout" in openai_outcome.error.message, openai_outcome.error  # type: ignore[union-attr]
    # Both backend connections were dropped, so vLLM frees their slots.
    assert eventually(lambda: backend.disconnects.count("stall") == stalled + 2)
    assert nothing_in_flight(proxy), in_flight(proxy)


@pytest.mark.parametrize(
    ("path", "model"), [("/v1/chat/completions", "gpt-4o"), ("/v1/messages", "claude-x")]
)
def test_a_slow_reader_holds_the_backend_back_instead_of_filling_the_proxy(
    proxy: RunningProxy, backend: ScriptedBackend, path: str, model: str
) -> None:
    body = json.dumps(
        {
            "model": model,
            "max_tokens": 9,
            "stream": True,
            "messages": [{"role": "user", "content": "scenario:flood"}],
        }
    ).encode()
    port = int(proxy.base_url.rsplit(":", 1)[1])
    client = socket.socket()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a client that barely reads
    client.connect(("127.0.0.1", port))
    try:
        client.sendall(
            f"POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
            f"x-api-key: {ALICE_KEY}\r\ncontent-length: {len(body)}\r\n\r\n".encode()
            + body
        )
        assert b" 200 " in client.recv(1024)
        # The client reads nothing more. Whatever the kernel's socket buffers hold, the
        # backend must soon stall: the proxy takes in no more than it can pass on.
        time.sleep(2.0)
        stalled_at = backend.flood_sent
        time.sleep(1.5)
        assert backend.flood_sent == stalled_at, "the backend kept sending into the proxy"
        assert stalled_at < FLOOD_BYTES // 4, f"{stalled_at / 2**20:.0f} MiB taken in"
        # Reading again resumes the flow.
        client.settimeout(5)
        deadline = time.monotonic() + 20
        while backend.flood_sent == stalled_at and time.monotonic() < deadline:
            assert client.recv(65536)
        assert backend.flood_sent > stalled_at
    finally:
        client.close()


@pytest.mark.parametrize(
    ("path", "model"), [("/v1/messages", "claude-x"), ("/v1/chat/completions", "gpt-4o")]
)
def test_a_proxy_restart_ends_running_streams_with_a_retryable_error(
    scripted_backend, path: str, model: str
) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    env = {**os.environ, "STACKCTL_PROXY_KEYS": f"alice={ALICE_KEY}", "STACKCTL_PROXY_LOG_LEVEL": "warning"}
    command = [sys.executable, "-m", "stackctl.proxy", "serve", "--backend", scripted_backend[1],
               "--port", str(port), "--default-model", "qwen3-coder", "--search-backend", "off"]
    process = subprocess.Popen(command, env=env, cwd=REPO)
    try:
        wait_until_healthy(f"http://127.0.0.1:{port}", process)
        body = {"model": model, "max_tokens": 9, "stream": True,
                "messages": [{"role": "user", "content": "scenario:hang"}]}
        with httpx.stream("POST", f"http://127.0.0.1:{port}{path}", json=body,
                          headers={"x-api-key": ALICE_KEY}, timeout=30) as response:
            chunks = response.iter_text()
            received = next(chunks)
            process.send_signal(signal.SIGTERM)  # a restart: the stream outlives the 5 s grace
            received += "".join(chunks)  # a bare close would raise here
    finally:
        process.terminate()
        process.wait(20)
    last = json.loads(received.strip().splitlines()[-1].removeprefix("data: "))
    assert "restarted mid-reply" in last["error"]["message"], received[-300:]
    if path == "/v1/messages":
        assert re.findall(r"^event: (\w+)$", received, re.MULTILINE)[-1] == "error"
        assert last["error"]["type"] == "overloaded_error"
