"""A streaming ASGI response that stops its producer the moment the client goes away.

Starlette's StreamingResponse only notices a disconnect when a write fails, which never
happens while the backend is still prefilling a long prompt; watching `receive()` instead
cancels the producer, which closes the backend connection, and vLLM frees the slot.

Plain asyncio tasks, not anyio task groups: a task group costs ~90 us per request here
against ~10 us for a task, and this runs once per streamed request (uvicorn is asyncio).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from starlette.responses import Response
from starlette.types import Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import RequestResponseCycle

# The scope key under which the app (app.py) leaves the server's own `send`.
SERVER_SEND = "stackctl.server_send"


class ClientBody:
    """The streamed reply's body, as a producer writes it.

    `await body(data)` writes and waits while the client's socket is full, so a slow reader
    holds the backend back instead of growing a buffer here. `body.write_now(data)` is the
    per-token path's write from a backend read's callback, with no task switch and none of the
    ASGI `send`: it writes at once, where `body.can_write_now()` said True in that same callback
    (it says False when the client's socket is full, the client left, or the server is not
    uvicorn's httptools one; the caller then goes the awaited way). On a small VM, where one token at a time wakes
    the proxy, that is about a third less of its CPU per token (benchmarks/proxy_overhead.py).
    `body.end_with(data)` holds the stream's last events once the backend's reply has arrived
    whole: they go out with the body's end, in one write (a one-read reply costs three writes,
    not four)."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._last = b""  # the stream's last bytes, held for the body's end (`end_with`)
        # uvicorn's own state for this response: its transport, flow control and framing.
        cycle = getattr(send, "__self__", None)
        known = isinstance(cycle, RequestResponseCycle) and all(
            hasattr(cycle, name) for name in ("transport", "flow", "disconnected", "chunked_encoding",
                                              "response_complete"))
        self._cycle = cycle if known else None

    async def __call__(self, data: bytes) -> None:
        if self._last:
            data, self._last = self._last + data, b""
        await self._send({"type": "http.response.body", "body": data, "more_body": True})

    def end_with(self, data: bytes) -> None:
        """`data` ends the stream: the backend's reply is read whole, so it goes out with the
        body's end, in the one write that ends the response (a write less per request), or
        before anything written after it."""
        self._last += data

    def take_last(self) -> bytes:
        last, self._last = self._last, b""
        return last

    def can_write_now(self) -> bool:
        cycle = self._cycle
        return not (cycle is None or cycle.flow.write_paused or cycle.disconnected
                    or not cycle.chunked_encoding or cycle.response_complete)

    def write_now(self, data: bytes) -> None:
        """Only after `can_write_now()` said True in the same callback (nothing ran between)."""
        if self._last:
            data, self._last = self._last + data, b""
        # uvicorn's chunked framing, as its `send` writes a body part.
        self._cycle.transport.write(b"%x\r\n%b\r\n" % (len(data), data))  # type: ignore[union-attr]


Emit = ClientBody
Producer = Callable[[ClientBody], Coroutine[Any, Any, None]]

SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    # nginx in front would otherwise buffer the stream and break time-to-first-token.
    (b"x-accel-buffering", b"no"),
]


@dataclass(frozen=True)
class Stream:
    """A streamed reply as a handler returns it: `produce(body)` writes the events to the
    ClientBody it is given; `close()` always runs after, even on a disconnect. It must not wait
    (it gives the backend connection back): a close that cannot be cancelled halfway needs no
    task to shield it."""

    produce: Producer
    close: Callable[[], None]
    # Written when the server stops before the stream ends (a restart past the 5 s grace): the
    # API's own retryable error, so the client retries instead of reading a cut stream.
    interrupted: bytes = b""


class ProducerResponse(Response):
    """Serves a Stream; `on_done(disconnected)` runs exactly once, however it ends.

    The per-token path is kept short: the producer runs in a task of its own, so a token
    resumes its few frames and not the dozen of Starlette's and uvicorn's ASGI chain, and
    body writes go to the server's own `send` (SERVER_SEND), not through Starlette's two
    wrappers (they only watch for `http.response.start`, which still passes them)."""

    def __init__(self, stream: Stream, *, on_done: Callable[[bool], None],
                 in_flight: set[asyncio.Task[Any]] | None = None) -> None:
        # Not Response.__init__: there is no body to render, only the stream to run.
        self.status_code = 200
        self.background = None
        self.raw_headers = list(SSE_HEADERS)
        self._produce = stream.produce
        self._close = stream.close
        self._interrupted = stream.interrupted
        self._on_done = on_done
        # The app's streams being served: a stopping server waits for them (`ends_of`).
        self._in_flight = in_flight if in_flight is not None else set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        server_send: Send = scope.get(SERVER_SEND, send)
        emit = ClientBody(server_send)

        async def client_left() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        serving = asyncio.current_task()
        if serving is not None:
            self._in_flight.add(serving)
        disconnected = False
        closed = False
        producer: asyncio.Task[None] | None = None
        watcher: asyncio.Task[None] | None = None
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
            producer = asyncio.create_task(self._produce(emit))
            watcher = asyncio.create_task(client_left())
            await asyncio.wait((producer, watcher), return_when=asyncio.FIRST_COMPLETED)
            if not producer.done():
                # The client left: stop the producer at its current await (a backend read).
                disconnected = True
                await cancel_and_wait(producer)
            elif isinstance(producer.exception(), OSError):  # a write failed: the client is gone
                disconnected = True
            else:
                producer.result()  # a bug in the producer surfaces here, as before
                # Closed before the reply's end reaches the client: its next request may come at
                # once, and should find the backend connection back in the pool.
                closed = True
                self._close()
                await send({"type": "http.response.body", "body": emit.take_last(), "more_body": False})
        except OSError:
            disconnected = True
        except asyncio.CancelledError:  # the server is stopping: end the stream, not cut it
            if producer is not None and not disconnected and self._interrupted:
                await cancel_and_wait(producer)
                # The reply's end already held (`end_with`): the stream is whole, not cut.
                ending = emit.take_last() or self._interrupted
                with contextlib.suppress(Exception):
                    body = {"type": "http.response.body", "body": ending, "more_body": False}
                    await server_send(body)
            raise
        finally:
            try:
                for task in (watcher, producer):
                    if task is not None:
                        await cancel_and_wait(task)  # the server shutting down cancels us
                if not closed:
                    self._close()
            finally:
                self._in_flight.discard(serving)
                self._on_done(disconnected)


async def ends_of(in_flight: set[asyncio.Task[Any]], timeout_s: float) -> None:
    """Wait (at most `timeout_s`) for the streams still being served to write their ending.
    uvicorn cancels them at the end of its shutdown grace and goes on without waiting; the
    loop would close before a stream could tell its client to retry."""
    if in_flight:
        await asyncio.wait(set(in_flight), timeout=timeout_s)


async def cancel_and_wait(task: asyncio.Task[None]) -> None:
    """Stop a helper task and collect its outcome (a failed write there is not news)."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, OSError):
        await task
