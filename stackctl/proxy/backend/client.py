"""The one connection pool to the OpenAI-compatible backend (vLLM, llama.cpp, SGLang).

aiohttp, not httpx: every streamed token crosses this client, and aiohttp parses HTTP in C
(llhttp) with one buffer per connection, where httpx/httpcore run h11 in Python plus an anyio
cancel scope per read. With httpx the client alone took a quarter of the proxy's CPU at 128
streams (see benchmarks/proxy_overhead.py).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

import aiohttp

from stackctl.proxy.backend.error_hints import hint_for_backend_error
from stackctl.proxy.errors import BackendError, BackendUnavailable

# What a broken backend stream raises; routes catch this without knowing the HTTP client.
StreamError = (aiohttp.ClientError, asyncio.TimeoutError)

# Long prompts can take minutes to prefill before the first byte; a stalled backend is still
# noticed (read timeout), and connecting to a stopped one fails fast.
_TIMEOUT = aiohttp.ClientTimeout(total=None, connect=10.0, sock_read=900.0)
# Every streaming client holds one backend connection; 128 agents must not queue on the pool.
_MAX_CONNECTIONS = 1024
_KEEPALIVE_SECONDS = 30.0


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


class BackendStream:
    """A streamed backend reply: headers read, body read by `read()`; always `aclose()`."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.status_code = response.status
        self.headers: Mapping[str, str] = response.headers
        # The bytes that have arrived (the network's boundaries, not the events'); b"" at the
        # end. aiohttp's own reader, called directly: an async iterator around it costs two
        # more frames per token.
        self.read: Callable[[], Awaitable[bytes]] = response.content.readany

    async def aread(self) -> bytes:
        return await self._response.read()

    async def aclose(self) -> None:
        if self._response.content.at_eof():
            self._response.release()  # the connection goes back to the pool
        else:
            # Unfinished (the client left): drop the connection, so vLLM aborts the request
            # and frees its slot instead of generating into the void.
            self._response.close()


class Backend:
    def __init__(self, base_url: str, *, api_key: str | None) -> None:
        self.base_url = base_url.rstrip("/")
        # identity: a compressed SSE stream could not be relayed or parsed event by event.
        self._headers = {"content-type": "application/json", "accept-encoding": "identity"}
        if api_key:
            # vLLM stays on loopback behind --api-key; clients never see this key.
            self._headers["authorization"] = f"Bearer {api_key}"
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        # Created on first use, inside the server's event loop (aiohttp binds to it).
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                headers=self._headers,
                timeout=_TIMEOUT,
                auto_decompress=False,
                # Cookies a backend sets must never leak from one client's request to another's.
                cookie_jar=aiohttp.DummyCookieJar(),
                connector=aiohttp.TCPConnector(
                    limit=_MAX_CONNECTIONS, keepalive_timeout=_KEEPALIVE_SECONDS
                ),
            )
        return self._session

    async def aclose(self) -> None:
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
        return BackendStream(await self._send("POST", path, body))

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
        if isinstance(error, aiohttp.ClientConnectorError):
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
