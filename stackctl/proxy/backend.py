"""The one connection pool to the OpenAI-compatible backend (vLLM, llama.cpp, SGLang)."""

from __future__ import annotations

import json

# httpx2 is httpx's maintained successor (same API; the anthropic and openai SDKs already
# depend on it). httpx 0.28's pool (httpcore 1.0.9) rescans every connection for every
# connection on each request and response close, O(n^2): at 128 concurrent streams it spent
# two thirds of the proxy's CPU there and throughput fell to 7% of direct (see
# benchmarks/proxy_overhead.py). httpcore2's pool does one pass.
import httpx2 as httpx

# What a broken backend stream raises; routes catch this without knowing the HTTP client.
StreamError = httpx.HTTPError
Transport = httpx.AsyncBaseTransport

from pydantic import ValidationError

from stackctl.proxy.errors import BackendError, BackendUnavailable
from stackctl.proxy.openai_protocol import ChatCompletion

# Long prompts can take minutes to prefill before the first byte; a stalled backend is still
# noticed (read timeout), and connecting to a stopped one fails fast.
_TIMEOUT = httpx.Timeout(connect=10.0, read=900.0, write=60.0, pool=60.0)
# Every streaming client holds one backend connection; 128 agents must not queue on the pool.
_LIMITS = httpx.Limits(max_connections=1024, max_keepalive_connections=256, keepalive_expiry=30)


class Backend:
    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None,
        transport: Transport | None = None,
    ) -> None:
        self.base_url = base_url
        # identity: a compressed SSE stream could not be relayed or parsed event by event.
        headers = {"content-type": "application/json", "accept-encoding": "identity"}
        if api_key:
            # vLLM stays on loopback behind --api-key; clients never see this key.
            headers["authorization"] = f"Bearer {api_key}"
        self._client = httpx.AsyncClient(
            base_url=base_url,
            headers=headers,
            timeout=_TIMEOUT,
            limits=_LIMITS,
            transport=transport,
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def request(self, method: str, path: str, body: bytes | None = None) -> httpx.Response:
        """A whole reply; raises BackendUnavailable when the backend cannot be reached."""
        try:
            return await self._client.request(method, path, content=body)
        except httpx.TransportError as error:
            raise self.unavailable(error) from None

    async def chat_completion(self, body: bytes) -> ChatCompletion:
        """One unstreamed /v1/chat/completions call, parsed; backend errors raised."""
        reply = await self.request("POST", "/v1/chat/completions", body)
        if reply.status_code != 200:
            raise backend_error(reply.status_code, reply.content)
        try:
            return ChatCompletion.model_validate_json(reply.content)
        except ValidationError:
            raise BackendError(
                "backend reply is not an OpenAI chat completion", backend_status=502
            ) from None

    async def open_stream(self, path: str, body: bytes) -> httpx.Response:
        """Headers read, body not yet: the caller must `aclose()` the response."""
        request = self._client.build_request("POST", path, content=body)
        try:
            return await self._client.send(request, stream=True)
        except httpx.TransportError as error:
            raise self.unavailable(error) from None

    async def open_chat_stream(self, body: bytes) -> httpx.Response:
        """A streamed /v1/chat/completions reply with status 200 (else its error is raised)."""
        upstream = await self.open_stream("/v1/chat/completions", body)
        if upstream.status_code != 200:
            content = await upstream.aread()
            await upstream.aclose()
            raise backend_error(upstream.status_code, content)
        return upstream

    async def served_models(self) -> tuple[str, ...]:
        response = await self.request("GET", "/v1/models")
        if response.status_code != 200:
            raise backend_error(response.status_code, response.content)
        try:
            return tuple(str(item["id"]) for item in response.json()["data"])
        except (ValueError, KeyError, TypeError):
            raise BackendError(
                "backend /v1/models reply is not an OpenAI model list", backend_status=502
            ) from None

    def unavailable(self, error: Exception) -> BackendUnavailable:
        reason = type(error).__name__
        if isinstance(error, httpx.ConnectError):
            reason = "connection refused"
        elif isinstance(error, httpx.TimeoutException):
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
    return BackendError(f"backend answered {status}: {message}", backend_status=status)
