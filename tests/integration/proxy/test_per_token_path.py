"""The per-token path: a token that arrives on its own goes out from the backend read's callback.

In front of a GPU engine each token is a read of its own. Written from that read's callback
(ClientBody.write_now), it skips a task switch and the ASGI `send`; the client gets the same
stream either way. (A client that stops reading still holds the backend back: test_faults.py's
slow reader runs through this path.)
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Awaitable, Callable

import httpx
import pytest

from stackctl.proxy.streaming import ClientBody
from tests.support.proxy.running import ALICE_KEY, RunningProxy

pytestmark = pytest.mark.integration

ROUTES = [
    ("/v1/chat/completions", "gpt-4o", rb'"content":"([^"]*)"'),
    ("/v1/messages", "claude-x", rb'"text_delta","text":"([^"]*)"'),
]


def _stream(proxy: RunningProxy, path: str, model: str, scenario: str = "scenario:text pace=0.02") -> bytes:
    body = {"model": model, "max_tokens": 64, "stream": True,
            "messages": [{"role": "user", "content": scenario}]}
    with httpx.stream("POST", proxy.base_url + path, json=body, headers={"x-api-key": ALICE_KEY},
                      timeout=30) as response:
        assert response.status_code == 200
        return response.read()


def _count_writes(monkeypatch: pytest.MonkeyPatch, *, fast_path: bool) -> Counter[str]:
    writes: Counter[str] = Counter()
    can_write_now: Callable[[ClientBody], bool] = ClientBody.can_write_now
    write_now: Callable[[ClientBody, bytes], None] = ClientBody.write_now
    awaited: Callable[[ClientBody, bytes], Awaitable[None]] = ClientBody.__call__

    def counted_write_now(self: ClientBody, data: bytes) -> None:
        writes["from the read's callback"] += 1
        write_now(self, data)

    async def counted_call(self: ClientBody, data: bytes) -> None:
        writes["awaited"] += 1
        await awaited(self, data)

    monkeypatch.setattr(ClientBody, "can_write_now", lambda self: fast_path and can_write_now(self))
    monkeypatch.setattr(ClientBody, "write_now", counted_write_now)
    monkeypatch.setattr(ClientBody, "__call__", counted_call)
    return writes


@pytest.mark.parametrize(("path", "model", "text_mark"), ROUTES)
def test_paced_tokens_are_written_from_the_backend_reads_callback(
    proxy: RunningProxy, monkeypatch: pytest.MonkeyPatch, path: str, model: str, text_mark: bytes
) -> None:
    with monkeypatch.context() as patch:
        slow = _count_writes(patch, fast_path=False)
        reference = _stream(proxy, path, model)
    fast = _count_writes(monkeypatch, fast_path=True)
    streamed = _stream(proxy, path, model)

    texts = re.findall(text_mark, streamed)
    assert len(texts) >= 10, streamed[:400]
    assert texts == re.findall(text_mark, reference)
    assert _events(streamed) == _events(reference)
    # Each paced token went out from its read's callback; the relay's task only wrote what
    # came before the first token (the role chunk, message_start) and the stream's end.
    assert fast["from the read's callback"] >= len(texts), fast
    assert fast["awaited"] <= 3, fast
    assert slow["from the read's callback"] == 0 and slow["awaited"] >= len(texts), slow


def _events(stream: bytes) -> list[str]:
    """Each event's kind, ids and timestamps aside: the stream's shape."""
    kinds = []
    for line in stream.splitlines():
        if line.startswith(b"data: {"):
            event = json.loads(line[6:])
            kinds.append(str(event.get("type") or event.get("object")))
        elif line.startswith(b"data: "):
            kinds.append(line[6:].decode())
    return kinds


@pytest.mark.parametrize(("path", "model", "text_mark"), ROUTES)
def test_the_replys_last_read_goes_out_with_the_bodys_end(
    proxy: RunningProxy, monkeypatch: pytest.MonkeyPatch, path: str, model: str, text_mark: bytes
) -> None:
    # Unpaced, the scripted backend's [DONE] and its body's end come in one read: the stream's
    # last events are held for the response's end (one write less per request), and still reach
    # the client last and whole.
    held: list[bytes] = []
    end_with: Callable[[ClientBody, bytes], None] = ClientBody.end_with

    def recorded(self: ClientBody, data: bytes) -> None:
        held.append(data)
        end_with(self, data)

    monkeypatch.setattr(ClientBody, "end_with", recorded)
    streamed = _stream(proxy, path, model, "scenario:text")

    assert len(held) == 1, held
    assert streamed.endswith(held[0])
    ending = {"/v1/chat/completions": "[DONE]", "/v1/messages": "message_stop"}[path]
    assert _events(held[0])[-1] == ending
    assert len(re.findall(text_mark, streamed)) >= 10
