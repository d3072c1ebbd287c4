"""Run ASGI apps on free loopback ports in background threads (test helper)."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time

import httpx
import uvicorn


class ServerThread:
    """A uvicorn server on 127.0.0.1:<free port>; `stop()` always joins the thread."""

    def __init__(self, app, *, log_level: str = "warning") -> None:  # type: ignore[no-untyped-def]
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            app,
            loop="uvloop",
            http="httptools",
            log_level=log_level,
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )

    def start(self) -> ServerThread:
        self._thread.start()
        deadline = time.monotonic() + 15
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"test server on port {self.port} did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._socket.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_healthy(base_url: str, process: subprocess.Popen, timeout_s: float = 20) -> None:  # type: ignore[type-arg]
    """Poll a `stackctl proxy serve` subprocess's /health; fail if it exits or stays down."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if httpx.get(base_url + "/health").status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert process.poll() is None and time.monotonic() < deadline, "proxy did not start"
        time.sleep(0.1)


def raw_sse_events(base_url: str, api_key: str, request: dict) -> list[tuple[str, dict]]:  # type: ignore[type-arg]
    """A streamed /v1/messages reply as (event name, data) pairs, read with plain httpx."""
    with httpx.stream(
        "POST",
        base_url + "/v1/messages",
        json={**request, "stream": True},
        headers={"x-api-key": api_key, "anthropic-version": "2023-06-01"},
        timeout=20,
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        body = response.read().decode()
    events = []
    for block in body.split("\n\n"):
        if block.strip():
            lines = dict(line.split(": ", 1) for line in block.split("\n"))
            events.append((lines["event"], json.loads(lines["data"])))
    return events
