"""Streamed backend replies read straight off the socket: one asyncio Protocol per keep-alive
connection, each reply parsed by httptools (llhttp in C, the parser uvicorn serves with).

Every streamed token crosses this reader. aiohttp's StreamReader costs about 14 Python calls per
network read, and waking its reader another few; here a read is one callback that appends the
bytes and wakes the one waiting relay (benchmarks/proxy_overhead.py --compare, 32 deltas a request
at 50/s: 5 to 15 us less of the proxy's CPU per delta at 16 and 64 streams). Unstreamed calls stay
on aiohttp (backend/client.py).
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import cast
from urllib.parse import urlsplit

import httptools

_HIGH_WATER = 256 * 1024  # buffered body bytes at which the socket stops being read
_MAX_IDLE = 256  # kept-alive connections waiting for the next reply


class ReplyBroken(Exception):
    """The backend's connection ended, or sent what is not HTTP, before its reply did."""


class ReadTimeout(ReplyBroken):
    """The backend sent nothing for longer than the read timeout."""


@dataclass(frozen=True)
class Origin:
    """Where the backend listens, from its base URL (http or https, an optional path prefix)."""

    host: str
    port: int
    tls: bool
    prefix: str

    @classmethod
    def of(cls, base_url: str) -> Origin:
        parts = urlsplit(base_url)
        tls = parts.scheme == "https"
        return cls(parts.hostname or "127.0.0.1", parts.port or (443 if tls else 80), tls,
                   parts.path.rstrip("/"))

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


class ReplyConnection(asyncio.Protocol):
    """One connection to the backend and the reply being read on it.

    The body arrives as the network delivers it: `read()` returns everything received since
    the last call (b"" at the end), or raises the error that ended it."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._transport: asyncio.Transport | None = None
        self.closed = False
        self._reset()

    def _reset(self) -> None:
        self._parser = httptools.HttpResponseParser(self)
        self.status_code = 0
        self.headers: dict[str, str] = {}
        self._body: list[bytes] = []
        self._buffered = 0
        self.total_bytes = 0  # body bytes received: the silence watch reads it
        self.complete = False
        self._until_eof = False  # neither a length nor chunks: the body ends with the connection
        self._keep_alive = False  # read with the headers (llhttp forgets it once the body ends)
        self._error: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._head: asyncio.Future[None] = self._loop.create_future()
        self._paused = False
        # Set by the relay (`deliver_to`): while it waits in `read()`, each part of the body
        # goes to it from this callback, without waking its task.
        self._sink: Callable[[bytes], bool] | None = None
        self._parked = False  # the reader waits in read() with nothing unread
        self._held: list[bytes] = []  # the body parts of this network read, for the sink

    # ---- asyncio.Protocol ----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, but have its methods.
        self._transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError:
            self._pass_on_held()
            self.set_exception(ReplyBroken("the backend's reply is not valid HTTP/1.1"))
            self.close()
            return
        self._pass_on_held()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.complete:
            return
        if self._until_eof and exc is None:
            self.on_message_complete()
        else:
            self.set_exception(ReplyBroken("the backend closed the connection mid-reply"))

    # ---- httptools callbacks -------------------------------------------------------------------

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_headers_complete(self) -> None:
        self.status_code = self._parser.get_status_code()
        self._keep_alive = self._parser.should_keep_alive()
        self._until_eof = ("content-length" not in self.headers
                           and "chunked" not in self.headers.get("transfer-encoding", ""))
        if not self._head.done():
            self._head.set_result(None)

    def on_body(self, body: bytes) -> None:
        self.total_bytes += len(body)
        if self._parked and self._sink is not None:
            # One network read holds many of the backend's chunks: the sink gets them together,
            # once the read is parsed (one write to the client, as from the relay's task).
            self._held.append(body)
            return
        self._queue(body)

    def on_message_complete(self) -> None:
        self.complete = True
        self._wake()

    # ---- the body ------------------------------------------------------------------------------

    def _pass_on_held(self) -> None:
        held = self._held
        if not held:
            return
        self._held = []
        data = held[0] if len(held) == 1 else b"".join(held)
        try:
            taken = self._sink is not None and self._sink(data)
        except Exception as error:  # noqa: BLE001 (a bug in the sink: `read()` raises it)
            self._sink = None
            self.set_exception(error)
            return
        if not taken:
            self._queue(data)

    def _queue(self, body: bytes) -> None:
        self._body.append(body)
        self._buffered += len(body)
        if self._buffered > _HIGH_WATER and not self._paused and self._transport is not None:
            # A slow client holds the backend back instead of growing this buffer.
            self._paused = True
            self._transport.pause_reading()
        self._wake()

    # ---- the reply -----------------------------------------------------------------------------

    def _wake(self) -> None:
        waiter = self._waiter
        self._parked = False  # what comes before the reader runs again must queue behind this
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def set_exception(self, error: BaseException) -> None:
        """End the reply with `error` (raised by the next `read()`)."""
        if self._error is None and not self.complete:
            self._error = error
        if not self._head.done():
            self._head.set_exception(error)
        self._wake()

    def is_eof(self) -> bool:
        return self.complete or self._error is not None

    @property
    def reusable(self) -> bool:
        return self.complete and not self.closed and self._keep_alive

    async def send(self, request: bytes) -> None:
        """Write a request and wait for its reply's status and headers."""
        assert self._transport is not None
        self._reset()
        self._transport.write(request)
        await self._head

    def head_timed_out(self) -> None:
        """The reply's status and headers did not come in time: `send()` raises TimeoutError."""
        if not self._head.done():
            self._head.set_exception(TimeoutError())

    def deliver_to(self, sink: Callable[[bytes], bool] | None) -> None:
        """While the reader waits in `read()`, hand the body that each network read brings to
        `sink`, in order, from this protocol's callback; what `sink` declines (False) is queued
        for `read()` instead, as is everything after it until the reader waits again. None: no
        sink."""
        self._sink = sink

    async def read(self) -> bytes:
        while not self._body:
            if self._error is not None:
                raise self._error
            if self.complete:
                return b""
            self._waiter = self._loop.create_future()
            self._parked = True
            try:
                await self._waiter
            finally:
                self._parked = False
        body, self._body, self._buffered = self._body, [], 0
        if self._paused and self._transport is not None:
            self._paused = False
            self._transport.resume_reading()
        return body[0] if len(body) == 1 else b"".join(body)

    async def read_all(self) -> bytes:
        parts = []
        while part := await self.read():
            parts.append(part)
        return b"".join(parts)

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
        self.closed = True


class ReplyConnections:
    """Kept-alive connections to one backend for streamed replies (LIFO: the warmest first)."""

    def __init__(self, base_url: str, headers: Mapping[str, str], *, connect_timeout_s: float,
                 head_timeout_s: float, on_connect: Callable[[], None] | None = None) -> None:
        self.origin = Origin.of(base_url)
        self._head_lines = "".join(f"{name}: {value}\r\n" for name, value in
                                   {"host": self.origin.host_header, **headers}.items())
        self._connect_timeout_s = connect_timeout_s
        self._head_timeout_s = head_timeout_s
        self._idle: list[ReplyConnection] = []
        self._on_connect = on_connect
        self._ssl = ssl.create_default_context() if self.origin.tls else None

    async def open(self, method: str, path: str, body: bytes) -> ReplyConnection:
        """A connection whose reply's headers have been read; give it back with `release()`.
        Raises OSError or TimeoutError when the backend cannot be reached."""
        request = (f"{method} {self.origin.prefix}{path} HTTP/1.1\r\n{self._head_lines}"
                   f"content-length: {len(body)}\r\n\r\n").encode("latin-1") + body
        while self._idle:
            connection = self._idle.pop()
            if connection.closed:
                continue
            try:
                return await self._send(connection, request)
            except ReplyBroken:
                if connection.total_bytes or connection.status_code:
                    raise
                # The backend closed this idle connection as the request went out (its
                # keep-alive ran out): the request was not read; send it on a new one.
                break
        return await self._send(await self._connect(), request)

    async def _send(self, connection: ReplyConnection, request: bytes) -> ReplyConnection:
        # A timer that fails the wait for the head, not asyncio.timeout: that one's bookkeeping
        # (a context manager cancelling the task) costs several times as much, every request.
        timer = asyncio.get_running_loop().call_later(self._head_timeout_s, connection.head_timed_out)
        try:
            await connection.send(request)
        except BaseException:
            connection.close()
            raise
        finally:
            timer.cancel()
        return connection

    async def _connect(self) -> ReplyConnection:
        loop = asyncio.get_running_loop()
        origin = self.origin
        async with asyncio.timeout(self._connect_timeout_s):
            _, connection = await loop.create_connection(
                ReplyConnection, origin.host, origin.port, ssl=self._ssl,
                server_hostname=origin.host if self._ssl else None,
            )
        if self._on_connect is not None:
            self._on_connect()
        return connection

    def release(self, connection: ReplyConnection) -> None:
        """Keep a connection whose reply was read whole; close any other (an unfinished reply:
        vLLM aborts the request and frees its slot instead of generating into the void)."""
        if connection.reusable and len(self._idle) < _MAX_IDLE:
            self._idle.append(connection)
        else:
            connection.close()

    def close(self) -> None:
        for connection in self._idle:
            connection.close()
        self._idle.clear()
