"""Overload is visible and polite: per-key limits answer 429 with retry-after, a long vLLM
queue answers 529 (Anthropic) / 503 (OpenAI), running streams keep going, /metrics counts
every refusal by reason and key."""

from __future__ import annotations

import threading
from dataclasses import replace

import anthropic
import httpx
import openai
import pytest

from stackctl.proxy.limit_settings import KeyLimits, LimitSettings
from tests.support.processes import eventually
from tests.support.proxy.running import ALICE_KEY, BOB_KEY, RunningProxy
from tests.support.proxy.scripted_backend import ScriptedBackend

pytestmark = pytest.mark.integration


def ask(text: str, **extra: object) -> dict[str, object]:
    return {
        "model": "claude-x",
        "max_tokens": 16,
        "messages": [{"role": "user", "content": text}],
        **extra,
    }


def chat(text: str, **extra: object) -> dict[str, object]:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": text}], **extra}


def test_a_key_over_its_concurrency_gets_429_in_its_api_shape(start_proxy, base_settings) -> None:  # type: ignore[no-untyped-def]
    limits = LimitSettings(overrides={"alice": KeyLimits(max_concurrent=1)})
    proxy = start_proxy(replace(base_settings, limits=limits))
    # Every reason for every key is exported from 0: the dashboard has series at once.
    text = httpx.get(proxy.base_url + "/metrics").text
    assert text.count("stackctl_proxy_rejections_total{") == 4 * 2
    with httpx.stream(
        "POST",
        proxy.base_url + "/v1/messages",
        json=ask("scenario:hang", stream=True),
        headers={"x-api-key": ALICE_KEY},
    ) as running:
        assert running.status_code == 200
        chunks = running.iter_raw()  # kept: a dropped iterator closes the connection
        next(chunks)  # alice's one slot is taken while this streams
        with pytest.raises(anthropic.RateLimitError) as caught:
            proxy.anthropic().messages.create(**ask("scenario:text"))
        assert caught.value.body["error"]["type"] == "rate_limit_error"
        assert caught.value.response.headers["retry-after"] == "1"
        assert "max_concurrent 1" in caught.value.message
        with pytest.raises(openai.RateLimitError) as caught_openai:
            proxy.openai().chat.completions.create(**chat("scenario:text"))
        error = caught_openai.value.body
        assert (error["type"], error["code"]) == ("rate_limit_error", "rate_limit_exceeded")
        # Another key is not held back, and counting tokens is not generation.
        assert proxy.anthropic(BOB_KEY).messages.create(**ask("scenario:text")).content
        assert (
            proxy.anthropic()
            .messages.count_tokens(model="claude-x", messages=[{"role": "user", "content": "hi"}])
            .input_tokens
        )
    # The stream ended (client left): once the proxy has noticed, the slot is free again.
    assert eventually(lambda: proxy.metric("stackctl_proxy_in_flight", route="/v1/messages") == 0, timeout_s=10.0)
    assert proxy.anthropic().messages.create(**ask("scenario:text")).content
    assert proxy.metric("stackctl_proxy_rejections_total", key="alice", reason="concurrent") == 2
    requests = "stackctl_proxy_requests_total"
    assert proxy.metric(requests, key="alice", route="/v1/messages", status="429") == 1
    assert proxy.metric("stackctl_proxy_in_flight", route="/v1/messages") == 0


def test_requests_and_tokens_per_minute(start_proxy, base_settings) -> None:  # type: ignore[no-untyped-def]
    limits = LimitSettings(
        overrides={
            "alice": KeyLimits(requests_per_minute=2),
            # The text scenario reports 42 + 14 tokens: one reply uses up bob's 50.
            "bob": KeyLimits(tokens_per_minute=50),
        }
    )
    proxy = start_proxy(replace(base_settings, limits=limits))
    client = proxy.openai()
    client.chat.completions.create(**chat("scenario:text"))
    client.chat.completions.create(**chat("scenario:text", stream=True)).close()
    with pytest.raises(openai.RateLimitError) as caught:
        client.chat.completions.create(**chat("scenario:text"))
    assert 55 <= int(caught.value.response.headers["retry-after"]) <= 60
    assert "2 requests per minute" in caught.value.message

    bob = proxy.anthropic(BOB_KEY)
    with bob.messages.stream(**ask("scenario:text")) as stream:
        stream.get_final_message()
    # Usage is charged when the proxy has finished the stream, a moment after the client has it.
    assert eventually(lambda: proxy.metric("stackctl_proxy_in_flight", route="/v1/messages") == 0, timeout_s=10.0)
    with pytest.raises(anthropic.RateLimitError) as refused:
        bob.messages.create(**ask("scenario:text"))
    assert "50 tokens per minute" in refused.value.message
    assert 55 <= int(refused.value.response.headers["retry-after"]) <= 60
    assert (
        proxy.metric("stackctl_proxy_rejections_total", key="alice", reason="requests_per_minute")
        == 1
    )
    assert (
        proxy.metric("stackctl_proxy_rejections_total", key="bob", reason="tokens_per_minute") == 1
    )


def test_a_long_backend_queue_turns_new_requests_away_and_lets_running_streams_finish(
    start_proxy, base_settings, backend: ScriptedBackend
) -> None:  # type: ignore[no-untyped-def]
    limits = LimitSettings(max_backend_waiting=5, backend_poll_s=0.05)
    proxy = start_proxy(replace(base_settings, limits=limits))
    events: list[str] = []

    def stream_slowly() -> None:
        with httpx.stream(
            "POST",
            proxy.base_url + "/v1/messages",
            json=ask("scenario:text pace=0.1", stream=True),
            headers={"x-api-key": ALICE_KEY},
            timeout=20,
        ) as response:
            for line in response.iter_lines():
                if line.startswith("event: "):
                    events.append(line.removeprefix("event: "))

    running = threading.Thread(target=stream_slowly)
    try:
        running.start()
        assert eventually(lambda: "content_block_delta" in events, timeout_s=10.0)
        backend.waiting = 6
        assert eventually(lambda: _status(proxy, "/v1/messages", ask("scenario:text")) == 529, timeout_s=10.0)
        with pytest.raises(anthropic.APIStatusError) as caught:
            proxy.anthropic().messages.create(**ask("scenario:text"))
        assert caught.value.status_code == 529
        assert caught.value.body["error"]["type"] == "overloaded_error"
        assert "6 requests are waiting" in caught.value.message
        with pytest.raises(openai.InternalServerError) as caught_openai:
            proxy.openai().chat.completions.create(**chat("scenario:text"))
        assert caught_openai.value.status_code == 503
        assert caught_openai.value.body["code"] == "backend_overloaded"
        running.join(timeout=20)
        assert events[-1] == "message_stop"  # the stream that was running finished whole
        backend.waiting = 5  # at the bound is not past it
        assert eventually(lambda: _status(proxy, "/v1/messages", ask("scenario:text")) == 200, timeout_s=10.0)
    finally:
        backend.waiting = 0
        running.join(timeout=20)
    assert (
        proxy.metric("stackctl_proxy_rejections_total", key="alice", reason="backend_queue") >= 2
    )


def _status(proxy: RunningProxy, path: str, body: dict[str, object]) -> int:
    return httpx.post(
        proxy.base_url + path, json=body, headers={"x-api-key": ALICE_KEY}
    ).status_code


