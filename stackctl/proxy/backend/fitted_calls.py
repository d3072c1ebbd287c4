"""Backend calls whose `max_tokens` fit the model's window (window_fit.py decides how much).

The common path is one backend request with `max_tokens` capped: no extra round trip. Only
when the backend refuses for the window does more happen, once:

- only the output budget was too large (a release that refuses prompt + max_tokens past the
  window, or a window that changed since the model list was read): the refusal states the
  window (and usually the prompt's exact length); the request is sent again with what fits;
- the prompt alone is too long: nothing to correct. The client gets Anthropic's
  `prompt is too long: N tokens > M maximum` (Claude Code compacts on it) or OpenAI's
  `context_length_exceeded`. Where the refusal gives no exact N (vLLM 0.32 stops counting at
  the window), the backend's `/tokenize` counts it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import ValidationError

from stackctl.proxy.backend.client import Backend, BackendReply, BackendStream, backend_error
from stackctl.proxy.backend.window_fit import WindowFit
from stackctl.proxy.backend.window_refusals import WindowRefusal, read_window_refusal
from stackctl.proxy.errors import BackendError, PromptTooLong
from stackctl.proxy.metrics import ProxyMetrics
from stackctl.proxy.protocol.openai import ChatCompletion, ChatRequest, TokenizeChatRequest

T = TypeVar("T")


@dataclass(frozen=True)
class Refused:
    """A backend reply with an error status, read whole."""

    status: int
    content: bytes
    content_type: str


Attempt = Callable[[int | None], Awaitable[T | Refused]]


class FittedCalls:
    """One client request's calls to the backend, on behalf of `model` and `api` (the route
    family whose body size the estimate reads)."""

    def __init__(
        self,
        backend: Backend,
        fit: WindowFit,
        metrics: ProxyMetrics,
        *,
        model: str,
        api: str,
        body_bytes: int,
        asked: int | None,
    ) -> None:
        self.backend = backend
        self.fit = fit
        self.metrics = metrics
        self.model = model
        self.api = api
        self.body_bytes = body_bytes
        self.asked = asked

    @property
    def base_url(self) -> str:
        return self.backend.base_url

    def learn_prompt(self, prompt_tokens: int) -> None:
        """The backend's usage report for this request: the next estimate starts from it."""
        self.fit.learn(self.model, self.api, self.body_bytes, prompt_tokens)

    # ---- Anthropic requests, translated to OpenAI chat ----------------------------------------

    async def open_chat_stream(self, chat: ChatRequest) -> BackendStream:
        """A streamed chat completion with status 200 (else its error is raised)."""

        async def attempt(max_tokens: int | None) -> BackendStream | Refused:
            chat.max_tokens = max_tokens
            return await self._stream("/v1/chat/completions", chat.to_json())

        outcome = await self.run(attempt, lambda: self._count_chat(chat))
        if isinstance(outcome, Refused):
            raise backend_error(outcome.status, outcome.content)
        return outcome

    async def chat_completion(self, chat: ChatRequest) -> ChatCompletion:
        async def attempt(max_tokens: int | None) -> BackendReply | Refused:
            chat.max_tokens = max_tokens
            return await self._request("/v1/chat/completions", chat.to_json())

        outcome = await self.run(attempt, lambda: self._count_chat(chat))
        if isinstance(outcome, Refused):
            raise backend_error(outcome.status, outcome.content)
        try:
            return ChatCompletion.model_validate_json(outcome.content)
        except ValidationError:
            raise BackendError(
                "backend reply is not an OpenAI chat completion", backend_status=502
            ) from None

    # ---- OpenAI requests, passed through -----------------------------------------------------

    async def open_stream(
        self, path: str, body: bytes, payload: dict[str, Any]
    ) -> BackendStream | Refused:
        """A streamed pass-through reply; an error reply comes back whole, to be relayed."""
        encode = _payload_encoder(body, payload)
        return await self.run(
            lambda max_tokens: self._stream(path, encode(max_tokens)),
            lambda: self._count_payload(payload),
        )

    async def request(
        self, path: str, body: bytes, payload: dict[str, Any]
    ) -> BackendReply | Refused:
        encode = _payload_encoder(body, payload)
        return await self.run(
            lambda max_tokens: self._request(path, encode(max_tokens)),
            lambda: self._count_payload(payload),
        )

    # ---- the one correction ------------------------------------------------------------------

    async def run(
        self, attempt: Attempt[T], count: Callable[[], Awaitable[int | None]]
    ) -> T | Refused:
        sent = self.fit.budget(self.model, self.api, self.body_bytes, self.asked)
        if sent != self.asked:
            self.metrics.context_fits.labels("capped").inc()
        outcome = await attempt(sent)
        if not isinstance(outcome, Refused):
            return outcome
        refusal = read_window_refusal(outcome.status, outcome.content)
        if refusal is None:
            return outcome
        self._remember(refusal)
        if refusal.prompt_too_long:
            raise await self._prompt_too_long(refusal, count)
        retry = (
            self.fit.corrected(self.model, self.asked, refusal.prompt_tokens)
            if self.asked
            else None
        )
        if retry is None or retry == sent:
            return outcome
        self.metrics.context_fits.labels("retried").inc()
        outcome = await attempt(retry)
        if isinstance(outcome, Refused):
            again = read_window_refusal(outcome.status, outcome.content)
            if again is not None and again.prompt_too_long:
                raise await self._prompt_too_long(again, count)
        return outcome

    def _remember(self, refusal: WindowRefusal) -> None:
        if refusal.window is not None:
            self.fit.windows[self.model] = refusal.window
        if refusal.prompt_tokens is not None and not refusal.at_least:
            self.learn_prompt(refusal.prompt_tokens)

    async def _prompt_too_long(
        self, refusal: WindowRefusal, count: Callable[[], Awaitable[int | None]]
    ) -> PromptTooLong:
        self.metrics.context_fits.labels("prompt_too_long").inc()
        window = refusal.window or self.fit.window(self.model) or 0
        tokens = refusal.prompt_tokens if not refusal.at_least else None
        if tokens is None:
            tokens = await count() or max(refusal.prompt_tokens or 0, window + 1)
        else:
            self.learn_prompt(tokens)
        return PromptTooLong(prompt_tokens=tokens, window=window)

    # ---- plumbing ----------------------------------------------------------------------------

    async def _stream(self, path: str, body: bytes) -> BackendStream | Refused:
        upstream = await self.backend.open_stream(path, body)
        if upstream.status_code == 200:
            return upstream
        try:
            content = await upstream.aread()
        finally:
            await upstream.aclose()
        return Refused(upstream.status_code, content, _content_type(upstream.headers))

    async def _request(self, path: str, body: bytes) -> BackendReply | Refused:
        reply = await self.backend.request("POST", path, body)
        if reply.status_code == 200:
            return reply
        return Refused(reply.status_code, reply.content, _content_type(reply.headers))

    async def _count_chat(self, chat: ChatRequest) -> int | None:
        tokenize = TokenizeChatRequest(
            model=chat.model,
            messages=chat.messages,
            tools=chat.tools,
            chat_template_kwargs=chat.chat_template_kwargs,
        )
        return await self._tokenize(tokenize.to_json())

    async def _count_payload(self, payload: dict[str, Any]) -> int | None:
        keys = ("model", "messages", "tools", "chat_template_kwargs", "prompt")
        return await self._tokenize(
            json.dumps({k: payload[k] for k in keys if k in payload}).encode()
        )

    async def _tokenize(self, body: bytes) -> int | None:
        try:
            reply = await self.backend.request("POST", "/tokenize", body)
            count = json.loads(reply.content).get("count") if reply.status_code == 200 else None
        except (BackendError, ValueError, AttributeError):
            return None
        return count if isinstance(count, int) else None


# Where a request asks for its output budget: chat, legacy completions, the Responses API.
_OUTPUT_FIELDS = ("max_completion_tokens", "max_tokens", "max_output_tokens")


def _payload_encoder(body: bytes, payload: dict[str, Any]) -> Callable[[int | None], bytes]:
    """The pass-through body with the output budget set in the field the client used; the
    client's bytes as they came when nothing changes."""
    field = next((name for name in _OUTPUT_FIELDS if name in payload), "max_tokens")
    original = payload.get(field)

    def encode(max_tokens: int | None) -> bytes:
        if max_tokens is None or max_tokens == original:
            return body
        return json.dumps({**payload, field: max_tokens}, allow_nan=False).encode()

    return encode


def _content_type(headers: Any) -> str:
    return str(headers.get("content-type", "application/json"))


def asked_output(payload: dict[str, Any]) -> int | None:
    """The output budget an OpenAI client asked for (None: not given, or not a number)."""
    for field in _OUTPUT_FIELDS:
        value = payload.get(field)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None
