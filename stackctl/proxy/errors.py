"""Errors the proxy answers with, rendered in the client's API format.

One small hierarchy: each error knows its HTTP status and its Anthropic and OpenAI error types,
so a route only decides *which* format to speak, never how to spell an error.
"""

from __future__ import annotations

import json
import math
from enum import Enum
from typing import ClassVar


class ApiFormat(Enum):
    """Which protocol the client speaks: decides the error body shape."""

    ANTHROPIC = "anthropic"
    OPENAI = "openai"


class ProxyError(Exception):
    """A failure answered to the client; the message says what happened and what to do."""

    status = 500
    anthropic_type = "api_error"
    openai_type = "server_error"
    openai_code: str | None = None
    # Seconds a client should wait before retrying; sent as `retry-after` (SDKs honour it).
    retry_after_s: float | None = None

    def __init__(self, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param

    def status_for(self, api: ApiFormat) -> int:
        return self.status

    def headers(self) -> dict[str, str]:
        if self.retry_after_s is None:
            return {}
        return {"retry-after": str(max(1, math.ceil(self.retry_after_s)))}

    def body(self, api: ApiFormat) -> bytes:
        """The JSON error body in the shape the client's SDK parses."""
        if api is ApiFormat.ANTHROPIC:
            payload: dict[str, object] = {
                "type": "error",
                "error": {"type": self.anthropic_type, "message": self.message},
            }
        else:
            payload = {
                "error": {
                    "message": self.message,
                    "type": self.openai_type,
                    "param": self.param,
                    "code": self.openai_code,
                }
            }
        return json.dumps(payload).encode()


class InvalidRequest(ProxyError):
    """Malformed JSON, wrong types, missing fields, oversized bodies."""

    status = 400
    anthropic_type = "invalid_request_error"
    openai_type = "invalid_request_error"


class PromptTooLong(InvalidRequest):
    """The prompt alone fills the model's window: the client must shorten it. Worded as the
    clients recognise it: Anthropic's (Claude Code compacts the conversation on it) and
    OpenAI's `context_length_exceeded`."""

    openai_code = "context_length_exceeded"

    def __init__(self, *, prompt_tokens: int, window: int) -> None:
        super().__init__(
            f"prompt is too long: {prompt_tokens} tokens > {window} maximum", param="messages"
        )
        self.prompt_tokens = prompt_tokens
        self.window = window

    def body(self, api: ApiFormat) -> bytes:
        if api is ApiFormat.ANTHROPIC:
            return super().body(api)
        message = (
            f"This model's maximum context length is {self.window} tokens. However, your messages "
            f"resulted in {self.prompt_tokens} tokens. Please reduce the length of the messages."
        )
        error = {
            "message": message,
            "type": self.openai_type,
            "param": self.param,
            "code": self.openai_code,
        }
        return json.dumps({"error": error}).encode()


class RequestTooLarge(InvalidRequest):
    status = 413
    anthropic_type = "request_too_large"


class UnsupportedMediaType(InvalidRequest):
    status = 415


class AuthenticationFailed(ProxyError):
    status = 401
    anthropic_type = "authentication_error"
    openai_type = "invalid_request_error"
    openai_code = "invalid_api_key"


class Forbidden(ProxyError):
    """A valid request whose key does not open this route (the admin API)."""

    status = 403
    anthropic_type = "permission_error"
    openai_type = "permission_error"


class ModelNotFound(ProxyError):
    status = 404
    anthropic_type = "not_found_error"
    openai_type = "invalid_request_error"
    openai_code = "model_not_found"


class BackendUnavailable(ProxyError):
    """The backend cannot be reached. Anthropic clients retry `overloaded_error` (529)."""

    status = 503
    anthropic_type = "overloaded_error"
    openai_type = "server_error"
    openai_code = "backend_unavailable"

    def status_for(self, api: ApiFormat) -> int:
        return 529 if api is ApiFormat.ANTHROPIC else 503


class Rejected(ProxyError):
    """Refused before any work, to protect the backend; counted by `reason` and key."""

    reason = "rejected"

    def __init__(self, message: str, *, reason: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.retry_after_s = retry_after_s


class RateLimited(Rejected):
    """A key is over one of its limits (rate_limits.py); SDKs and Claude Code retry a 429."""

    status = 429
    anthropic_type = "rate_limit_error"
    openai_type = "rate_limit_error"
    openai_code = "rate_limit_exceeded"


class Overloaded(Rejected):
    """The backend's queue is past its bound: Anthropic clients retry 529, OpenAI ones 503."""

    status = 503
    anthropic_type = "overloaded_error"
    openai_type = "server_error"
    openai_code = "backend_overloaded"

    def status_for(self, api: ApiFormat) -> int:
        return 529 if api is ApiFormat.ANTHROPIC else 503


class BackendError(ProxyError):
    """The backend answered with an error; its status is kept for 4xx, 5xx become 502."""

    openai_type = "server_error"

    _ANTHROPIC_TYPES: ClassVar[dict[int, str]] = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
    }

    def __init__(self, message: str, *, backend_status: int) -> None:
        super().__init__(message)
        self.status = backend_status if 400 <= backend_status < 500 else 502
        self.anthropic_type = self._ANTHROPIC_TYPES.get(self.status, "api_error")
        if 400 <= self.status < 500:
            self.openai_type = "invalid_request_error"


def sse_error_event(error: ProxyError) -> bytes:
    """An Anthropic `error` event, sent when the backend fails after the stream started."""
    return b"event: error\ndata: " + error.body(ApiFormat.ANTHROPIC) + b"\n\n"
