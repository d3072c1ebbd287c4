"""What the hostile-input tests share: the routes, a valid body for each, and what a proper
answer looks like (a well-formed error in the route's API shape, or a real reply)."""

from __future__ import annotations

import json
from typing import Any

from tests.support.proxy.servers import Reply

ANTHROPIC, OPENAI = "anthropic", "openai"
ROUTES = {
    "/v1/messages": ANTHROPIC,
    "/v1/messages/count_tokens": ANTHROPIC,
    "/v1/chat/completions": OPENAI,
    "/v1/completions": OPENAI,
    "/v1/responses": OPENAI,  # the Responses API's errors have OpenAI's shape
}
_USER = [{"role": "user", "content": "scenario:text"}]
VALID: dict[str, dict[str, Any]] = {
    "/v1/messages": {"model": "claude-x", "max_tokens": 16, "messages": _USER},
    "/v1/messages/count_tokens": {"model": "claude-x", "messages": _USER},
    "/v1/chat/completions": {"model": "gpt-4o", "messages": _USER},
    "/v1/completions": {"model": "gpt-4o", "prompt": "scenario:text", "max_tokens": 16},
    "/v1/responses": {"model": "gpt-4o", "input": _USER, "max_output_tokens": 16},
}


def headers_for(key: str, content_type: str | None = "application/json") -> dict[str, str]:
    headers = {"x-api-key": key, "anthropic-version": "2023-06-01"}
    if content_type is not None:
        headers["content-type"] = content_type
    return headers


def check_reply(route: str, reply: Reply) -> None:
    """A 4xx in the route's error shape, or a 200 that is a real reply; never a 5xx."""
    assert reply.status < 500, f"{route} -> {reply.status}: {reply.body[:300]!r}"
    if reply.status == 200:
        check_success(route, reply)
        return
    assert reply.status >= 400, f"{route} -> {reply.status}"
    assert reply.headers.get("content-type", "").startswith("application/json"), reply.headers
    payload = json.loads(reply.body)
    if ROUTES[route] == ANTHROPIC:
        assert payload["type"] == "error", payload
        assert isinstance(payload["error"]["type"], str) and payload["error"]["type"]
        assert isinstance(payload["error"]["message"], str) and payload["error"]["message"]
    else:
        assert isinstance(payload["error"]["message"], str) and payload["error"]["message"]
        assert isinstance(payload["error"]["type"], str) and payload["error"]["type"]


def check_success(route: str, reply: Reply) -> None:
    if reply.headers.get("content-type", "").startswith("text/event-stream"):
        text = reply.body.decode()
        if ROUTES[route] == ANTHROPIC:
            assert "event: message_stop" in text or "event: error" in text, text[-300:]
        elif route == "/v1/responses":
            last = text.rstrip().rsplit("\n\n", 1)[-1]
            assert last.startswith(("event: response.completed", "event: response.failed")), text[-300:]
        else:
            assert text.rstrip().endswith("data: [DONE]"), text[-300:]
        return
    payload = json.loads(reply.body)
    if route == "/v1/messages":
        assert payload["type"] == "message" and payload["content"] is not None
    elif route == "/v1/messages/count_tokens":
        assert isinstance(payload["input_tokens"], int)
    elif route == "/v1/responses":
        assert payload["object"] == "response" and payload["output"], payload
    else:
        assert payload["choices"], payload
