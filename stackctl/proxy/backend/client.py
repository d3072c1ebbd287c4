"""The proxy's connections to the OpenAI-compatible backend (vLLM, llama.cpp, SGLang).

Streamed replies, which every token crosses, are read by reply_stream.py's own protocol;
whole replies (models, tokenize, metrics, unstreamed calls) by aiohttp, not httpx:
httpx/httpcore run h11 in Python plus an anyio cancel scope per read.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

import aiohttp

from stackctl.proxy.backend.error_hints import hint_for_backend_error
from stackctl.proxy.backend.reply_stream import (
    ReadTimeout,
    ReplyBroken,
    ReplyConnection,
    ReplyConnections,
)
from stackctl.proxy.errors import BackendError, BackendUnavailable

# What a broken backend stream raises; routes catch this without knowing the HTTP client.
StreamError = (aiohttp.ClientError, asyncio.TimeoutError, ReplyBroken)

# Connecting to a stopped backend fails fast; the read timeout is the settings' (a stalled
# backend is noticed, long prefills are not cut).
_CONNECT_TIMEOUT_S = 10.0
_CHECKS_PER_TIMEOUT = 10  # a streamed body's silence is looked at this often per timeout
# Every unstreamed request in flight holds one connection of aiohttp's pool (streamed replies have their
# own, reply_stream.py); 128 agents must not queue on it.
_MAX_CONNECTIONS = 1024
_KEEPALIVE_SECONDS = 30.0
# How long the body's end may lag its last event ([DONE]) before the connection is given up.
_BODY_END_S = 2.0


@dataclass(frozen=True)
class ServedModel:
    name: str
    max_model_len: int | None  # None: the backend does not say


def _positive_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


@dataclass(frozen=True)
class BackendReply:
    """A whole (unstreamed) backend reply."""

    status_code: int
    headers: Mapping[str, str]
    content: bytes


class SilenceWatch:
    """Ends a streamed reply the backend has sent nothing of for `timeout_s`, with ReadTimeout
    (the routes turn it into the API's error).

    A timer per read (aiohttp's `sock_read`) would cost ~5% of the proxy's CPU per token; this
    looks at the count of bytes received a few times per timeout instead, so a stall ends
    between `timeout_s` and 1.1 x `timeout_s` after the last byte."""

    def __init__(self, reply: ReplyConnection, timeout_s: float) -> None:
        self._reply = reply
        self._timeout_s = timeout_s
        self._loop = asyncio.get_running_loop()
        self._seen = reply.total_bytes
        self._quiet_since = self._loop.time()
        self._timer = self._loop.call_later(timeout_s / _CHECKS_PER_TIMEOUT, self._check)

    def _check(self) -> None:
        reply, now = self._reply, self._loop.time()
        if reply.is_eof():
            return
        if reply.total_bytes != self._seen:
            self._seen = reply.total_bytes
            self._quiet_since = now
        elif now - self._quiet_since >= self._timeout_s:
            reply.set_exception(ReadTimeout(f"the backend sent nothing for {self._timeout_s:g} s"))
            return
        self._timer = self._loop.call_later(self._timeout_s / _CHECKS_PER_TIMEOUT, self._check)

    def cancel(self) -> None:
        self._timer.cancel()


class BackendStream:
    """A streamed backend reply: headers read, body read by `read()`; always `release()` (or
    `aclose()`)."""

    def __init__(self, reply: ReplyConnection, pool: ReplyConnections, *, read_timeout_s: float) -> None:
        self._reply = reply
        self._pool = pool
        self.status_code = reply.status_code
        self.headers: Mapping[str, str] = reply.headers
        # The bytes that have arrived (the network's boundaries, not the events'); b"" at the
        # end. The connection's own reader, called directly: a wrapper costs a frame per token.
        self.read: Callable[[], Awaitable[bytes]] = reply.read
        self._silence = SilenceWatch(reply, read_timeout_s)
        self._released = False

    def deliver_to(self, sink: Callable[[bytes], bool] | None) -> None:
        """The per-token path: see ReplyConnection.deliver_to."""
        self._reply.deliver_to(sink)

    @property
    def ended(self) -> bool:
        """The reply's body has arrived whole (in a sink: with the read being passed on)."""
        return self._reply.complete

    async def aread(self) -> bytes:
        return await self._reply.read_all()

    async def read_to_end(self) -> None:
        """Once the reply's last event ([DONE]) is in: read the body's end. vLLM writes it on its
        own, and only a connection whose reply was read to its end is kept (without this, such a
        reply cost the next request a new connection). A backend that goes on past [DONE] for
        longer than _BODY_END_S has its connection closed by `aclose()` instead."""
        read = self.read
        if self._reply.complete:  # mostly: the end came with [DONE]; reading it cannot wait
            while await read():
                pass
            return
        try:
            async with asyncio.timeout(_BODY_END_S):
                while await read():
                    pass
        except StreamError:
            pass

    async def aclose(self) -> None:
        self.release()

    def release(self) -> None:
        """Give the connection back: a whole reply's connection is kept; an unfinished one (the
        client left) is closed, so vLLM aborts the request and frees its slot. Once only. It
        never waits, so nothing can cancel it halfway."""
        if not self._released:
            self._released = True
            self._silence.cancel()
            self._pool.release(self._reply)


class Backend:
    def __init__(
        self, base_url: str, *, api_key: str | None, read_timeout_s: float,
        on_connect: Callable[[], None] | None = None,
    ) -> None:
        """`on_connect` is called for each connection opened for a streamed reply (a metric)."""
        self.base_url = base_url.rstrip("/")
        self.read_timeout_s = read_timeout_s
        self._timeout = aiohttp.ClientTimeout(
            total=None, connect=_CONNECT_TIMEOUT_S, sock_read=read_timeout_s
        )
        # identity: a compressed SSE stream could not be relayed or parsed event by event.
        self._headers = {"content-type": "application/json", "accept-encoding": "identity"}
        if api_key:
            # vLLM stays on loopback behind --api-key; clients never see this key.
            self._headers["authorization"] = f"Bearer {api_key}"
        self._session: aiohttp.ClientSession | None = None
        self._streams = ReplyConnections(self.base_url, self._headers,
                                         connect_timeout_s=_CONNECT_TIMEOUT_S,
                                         head_timeout_s=read_timeout_s, on_connect=on_connect)

    def _client(self) -> aiohttp.ClientSession:
        # Created on first use, inside the server's event loop (aiohttp binds to it).
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                headers=self._headers,
                timeout=self._timeout,
                auto_decompress=False,
                # Cookies a backend sets must never leak from one client's request to another's.
                cookie_jar=aiohttp.DummyCookieJar(),
                connector=aiohttp.TCPConnector(
                    limit=_MAX_CONNECTIONS, keepalive_timeout=_KEEPALIVE_SECONDS
                ),
            )
        return self._session

    async def aclose(self) -> None:
        self._streams.close()
        if self._session is not None:
            await self._session.close()

    async def _send(self, method: str, path: str, body: bytes | None) -> aiohttp.ClientResponse:
        try:
            return await self._client().request(method, self.base_url + path, data=body)
        except StreamError as error:
            raise self.unavailable(error) from None

    async def request(self, method: str, path: str, body: bytes | None = None) -> BackendReply:
        """A whole reply; raises BackendUnavailable when the backend cannot be reached."""
        response = await self._send(method, path, body)
        try:
            content = await response.read()
        except StreamError as error:
            raise self.unavailable(error) from None
        finally:
            response.release()
        return BackendReply(response.status, response.headers, content)

    async def open_stream(self, path: str, body: bytes) -> BackendStream:
        """Headers read, body not yet: the caller must `aclose()` the stream."""
        try:
            reply = await self._streams.open("POST", path, body)
        except (OSError, *StreamError) as error:
            raise self.unavailable(error) from None
        return BackendStream(reply, self._streams, read_timeout_s=self.read_timeout_s)

    async def open_chat_stream(self, body: bytes) -> BackendStream:
        """A streamed /v1/chat/completions reply with status 200 (else its error is raised)."""
        upstream = await self.open_stream("/v1/chat/completions", body)
        if upstream.status_code != 200:
            try:
                content = await upstream.aread()
            finally:
                await upstream.aclose()
            raise backend_error(upstream.status_code, content)
        return upstream

    async def model_list(self) -> tuple[ServedModel, ...]:
        """The served models, with each one's window where the backend states it (vLLM does)."""
        response = await self.request("GET", "/v1/models")
        if response.status_code != 200:
            raise backend_error(response.status_code, response.content)
        try:
            return tuple(
                ServedModel(str(item["id"]), _positive_int(item.get("max_model_len")))
                for item in json.loads(response.content)["data"]
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            raise BackendError(
                "backend /v1/models reply is not an OpenAI model list", backend_status=502
            ) from None

    async def metrics_text(self, timeout_s: float) -> str:
        """The backend's Prometheus page (vLLM serves it open); raises BackendUnavailable."""
        timeout = aiohttp.ClientTimeout(total=timeout_s)
        try:
            async with self._client().get(self.base_url + "/metrics", timeout=timeout) as reply:
                if reply.status != 200:
                    raise BackendError(
                        f"backend /metrics answered {reply.status}", backend_status=502
                    )
                return await reply.text(errors="replace")
        except StreamError as error:
            raise self.unavailable(error) from None

    def unavailable(self, error: BaseException) -> BackendUnavailable:
        reason = type(error).__name__
        if isinstance(error, (aiohttp.ClientConnectorError, ConnectionRefusedError)):
            reason = "connection refused"
        elif isinstance(error, asyncio.TimeoutError):
            reason = "timed out"
        return BackendUnavailable(
            f"the model backend at {self.base_url} is not reachable ({reason}); "
            "it may still be loading the model: retry shortly, or check `stackctl status`"
        )


def backend_error(status: int, body: bytes) -> BackendError:
    """A backend error reply, its message kept (vLLM's messages name the bad parameter)."""
    message = body[:2000].decode("utf-8", "replace").strip()
    try:
        payload = json.loads(body)
    except ValueError:
        payload = None
    if isinstance(payload, dict):
        inner = payload.get("error")
        if isinstance(inner, dict) and inner.get("message"):
            message = str(inner["message"])
        elif payload.get("message"):
            message = str(payload["message"])
        elif payload.get("detail"):
            message = str(payload["detail"])
    hint = hint_for_backend_error(status, body)
    fix = f" ({hint})" if hint else ""
    return BackendError(f"backend answered {status}: {message}{fix}", backend_status=status)
