"""Health gates against a real HTTP server on loopback: /health, the one-token completion, the
process-alive and confirm hooks."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from stackctl.health import ProbeResult, probe, wait_until_healthy
from stackctl.services import HealthGate


class Engine(BaseHTTPRequestHandler):
    """A stand-in engine whose answers the test sets: /health status, completion status."""

    health_status = 200
    completion_status = 200
    seen_keys: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.seen_keys.append(self.headers.get("Authorization", ""))
        self._reply(self.health_status, {})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        assert body["max_tokens"] == 1
        self._reply(self.completion_status, {"choices": [{"text": "x"}]} if self.completion_status == 200
                    else {"error": {"message": "engine dead"}})

    def _reply(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def engine() -> Iterator[str]:
    Engine.health_status, Engine.completion_status, Engine.seen_keys = 200, 200, []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Engine)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_http_gate_is_the_status_code(engine):
    assert probe(HealthGate(f"{engine}/health")).healthy
    Engine.health_status = 503
    result = probe(HealthGate(f"{engine}/health"))
    assert not result.healthy and "503" in result.detail


def test_vllm_gate_needs_a_served_token_too(engine):
    gate = HealthGate(f"{engine}/health", probe="vllm")
    assert probe(gate, api_key="sk-test", served_name="tiny") == ProbeResult(True, "serves completions")
    assert Engine.seen_keys[-1] == "Bearer sk-test"
    Engine.completion_status = 500
    result = probe(gate, served_name="tiny")
    assert not result.healthy and "one-token completion answered 500" in result.detail


def test_nothing_listening_is_unhealthy_not_an_error():
    result = probe(HealthGate("http://127.0.0.1:9/health"))
    assert not result.healthy and "ConnectError" in result.detail


def test_wait_stops_when_the_process_dies(engine):
    Engine.health_status = 503
    result = wait_until_healthy(HealthGate(f"{engine}/health"), 60, is_alive=lambda: False)
    assert result == ProbeResult(False, "the process exited")


def test_wait_times_out_with_the_last_check(engine):
    Engine.health_status = 503
    result = wait_until_healthy(HealthGate(f"{engine}/health"), 0.1)
    assert not result.healthy and "503" in result.detail


def test_confirm_must_pass_too(engine):
    verdicts = iter([ProbeResult(False, "Docker health: starting"), ProbeResult(True, "Docker health: healthy")])
    ticks: list[ProbeResult] = []
    result = wait_until_healthy(HealthGate(f"{engine}/health"), 30, confirm=lambda: next(verdicts),
                                on_tick=lambda _elapsed, checked: ticks.append(checked))
    assert result.healthy and not ticks[0].healthy and "waiting for Docker health: starting" in ticks[0].detail
