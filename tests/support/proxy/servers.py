"""Run ASGI apps on free loopback ports in background threads (test helper)."""

from __future__ import annotations

import http.client
import json
import logging
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import uvicorn
from starlette.types import Receive, Send


async def answer_lifespan(receive: Receive, send: Send) -> None:
    """Answer uvicorn's lifespan messages for an ASGI stand-in with nothing to start or stop."""
    while (await receive())["type"] != "lifespan.shutdown":
        await send({"type": "lifespan.startup.complete"})
    await send({"type": "lifespan.shutdown.complete"})


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


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self):  # type: ignore[no-untyped-def]
        return json.loads(self.body)


class KeptAliveConnection:
    """One HTTP/1.1 connection used for every request, like an SDK's pooled one.

    `request` fails the test if the server closes or resets it (a reply carrying
    `connection: close`, or a new socket needed): a proxy error must never cost the client
    its connection."""

    def __init__(self, base_url: str, timeout: float = 20.0) -> None:
        host, port = base_url.removeprefix("http://").split(":")
        self._connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
        self._socket: socket.socket | None = None

    def request(
        self,
        method: str,
        path: str,
        body: bytes | Iterator[bytes] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        headers = dict(headers or {})
        if isinstance(body, bytes):
            headers.setdefault("content-length", str(len(body)))
        elif body is not None:
            headers["transfer-encoding"] = "chunked"
        self._connection.request(
            method,
            path,
            body=body,
            headers=headers,
            encode_chunked=body is not None and not isinstance(body, bytes),
        )
        response = self._connection.getresponse()
        data = response.read()
        reply = Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, data)
        sock = self._connection.sock
        assert not response.will_close, f"{method} {path} -> {reply.status}: server closed it"
        assert self._socket is None or sock is self._socket, "the connection was replaced"
        self._socket = sock
        return reply

    def close(self) -> None:
        self._connection.close()


class LogProblems(logging.Handler):
    """Collects ERROR records and records with a traceback, from any thread."""

    NAMES = ("", "uvicorn")  # uvicorn does not propagate to the root logger

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR or record.exc_info:
            self.records.append(record)

    def attach(self) -> LogProblems:
        # uvicorn's logging config replaces handlers on its own loggers: attach after servers start.
        for name in self.NAMES:
            logging.getLogger(name).addHandler(self)
        return self

    def detach(self) -> None:
        for name in self.NAMES:
            logging.getLogger(name).removeHandler(self)

    def lines(self) -> list[str]:
        return [f"{r.name} {r.levelname}: {r.getMessage()}" for r in self.records]
