"""/v1/messages through the official anthropic SDK, against recorded vLLM replies."""

from __future__ import annotations

import json
from dataclasses import replace

import anthropic
import httpx
import pytest

from tests.support.proxy.running import ALICE_KEY, RunningProxy
from tests.support.proxy.scripted_backend import (
    RECORDED_SCENARIOS,
    SERVED_MODEL,
    ScriptedBackend,
)
from tests.support.proxy.servers import raw_sse_events

pytestmark = pytest.mark.integration

CLAUDE = "claude-haiku-4-5-20251001"
WEATHER_TOOLS = [
    {
        "name": "get_weather",
        "description": "Weather for a city.",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
    {
        "name": "get_time",
        "input_schema": {"type": "object", "properties": {"timezone": {"type": "string"}}},
    },
]


def ask(scenario: str, **extra: object) -> dict[str, object]:
    request: dict[str, object] = {
        "model": CLAUDE,
        "max_tokens": 256,
        "messages": [{"role": "user", "content": f"scenario:{scenario}"}],
        "stop_sequences": ["</answer>"],
    }
    request.update(extra)
    return request


def raw_events(proxy: RunningProxy, request: dict) -> list[tuple[str, dict]]:
    return raw_sse_events(proxy.base_url, ALICE_KEY, request)


def test_text_reply_is_translated(proxy: RunningProxy, backend: ScriptedBackend) -> None:
    message = proxy.anthropic().messages.create(**ask("text"))

    assert message.model == SERVED_MODEL
    assert message.id == "msg_5b0f6e1c2d3a4b5c9e8f7a6b5c4d3e2f"
    assert [block.type for block in message.content] == ["text"]
    assert message.content[0].text == (
        "The function `parse_config` reads the YAML file once and caches the result — café ☕."
    )
    assert message.stop_reason == "end_turn"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (42, 14)
    sent = backend.last("/v1/chat/completions")
    assert sent.body["model"] == SERVED_MODEL
    # The backend sees the proxy's own backend key, never the client's key.
    assert sent.headers["authorization"] == "Bearer sk-backend-secret"
    assert ALICE_KEY not in json.dumps(sent.headers)


@pytest.mark.parametrize("scenario", RECORDED_SCENARIOS)
def test_stream_accumulates_to_the_plain_reply(proxy: RunningProxy, scenario: str) -> None:
    client = proxy.anthropic()
    request = ask(scenario, tools=WEATHER_TOOLS)
    plain = client.messages.create(**request)
    with client.messages.stream(**request) as stream:
        streamed = stream.get_final_message()

    assert streamed.model_dump() == plain.model_dump()


def test_thinking_becomes_a_thinking_block(proxy: RunningProxy) -> None:
    message = proxy.anthropic().messages.create(
        **ask("thinking", thinking={"type": "enabled", "budget_tokens": 1024})
    )
    assert [block.type for block in message.content] == ["thinking", "text"]
    assert message.content[0].thinking == "The user wants the sum of 17 and 25. That is 42."
    assert message.content[1].text == "17 + 25 = **42**."
    assert (message.usage.input_tokens, message.usage.output_tokens) == (31, 15)


def test_two_tool_calls_become_two_tool_use_blocks(proxy: RunningProxy) -> None:
    with proxy.anthropic().messages.stream(
        **ask("two_tool_calls_interleaved", tools=WEATHER_TOOLS)
    ) as stream:
        message = stream.get_final_message()

    assert message.stop_reason == "tool_use"
    text, weather, clock = message.content
    assert text.type == "text" and text.text == "I'll check both."
    assert (weather.type, weather.name, weather.id) == (
        "tool_use",
        "get_weather",
        "chatcmpl-tool-0a1b2c3d4e5f4a6b",
    )
    assert weather.input == {"city": "Paris", "unit": "celsius"}
    assert (clock.name, clock.input) == ("get_time", {"timezone": "Europe/Paris"})


def test_stream_follows_the_anthropic_event_grammar(proxy: RunningProxy) -> None:
    events = raw_events(proxy, ask("two_tool_calls_interleaved", tools=WEATHER_TOOLS))
    names = [name for name, _ in events]
    assert all(name == data["type"] for name, data in events)
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]

    # Blocks open and close one at a time, with increasing indexes.
    open_index = None
    starts = []
    for name, data in events:
        if name == "content_block_start":
            assert open_index is None
            open_index = data["index"]
            starts.append(data["content_block"])
        elif name == "content_block_delta":
            assert data["index"] == open_index
        elif name == "content_block_stop":
            assert data["index"] == open_index
            open_index = None
    assert [block["type"] for block in starts] == ["text", "tool_use", "tool_use"]
    assert [block.get("name") for block in starts] == [None, "get_weather", "get_time"]

    start = events[0][1]["message"]
    no_cache = {"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    assert start["usage"]["input_tokens"] > 0  # the proxy's estimate: this backend reports usage last
    assert start["usage"] == {"input_tokens": start["usage"]["input_tokens"], **no_cache, "output_tokens": 0}
    delta = events[-2][1]
    assert delta["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
    assert delta["usage"] == {"input_tokens": 233, **no_cache, "output_tokens": 10}


def test_message_start_estimates_a_resent_conversation_from_the_last_count(proxy: RunningProxy) -> None:
    """vLLM states the prompt's tokens in the last chunk only: message_start carries the proxy's
    estimate (learned from the reply before), message_delta the count."""
    request = ask("two_tool_calls_interleaved", tools=WEATHER_TOOLS)
    first = raw_events(proxy, request)
    assert first[-2][1]["usage"]["input_tokens"] == 233
    again = raw_events(proxy, request)
    assert again[0][1]["message"]["usage"]["input_tokens"] == 233
    assert again[-2][1]["usage"]["input_tokens"] == 233


def test_message_start_carries_input_tokens_when_backend_reports_them(proxy: RunningProxy) -> None:
    events = raw_events(proxy, ask("thinking"))
    assert events[0][1]["message"]["usage"]["input_tokens"] == 31
    kinds = [data["delta"]["type"] for name, data in events if name == "content_block_delta"]
    assert kinds == ["thinking_delta"] * 9 + ["text_delta"] * 6


def test_stop_sequence_is_reported(proxy: RunningProxy) -> None:
    message = proxy.anthropic().messages.create(**ask("stop_sequence"))
    assert (message.stop_reason, message.stop_sequence) == ("stop_sequence", "</answer>")


def test_max_tokens_is_reported(proxy: RunningProxy) -> None:
    message = proxy.anthropic().messages.create(**ask("max_tokens"))
    assert message.stop_reason == "max_tokens"


def test_backend_dying_mid_stream_sends_an_error_event(proxy: RunningProxy) -> None:
    events = raw_events(proxy, ask("died_midway"))
    names = [name for name, _ in events]
    assert names[-1] == "error"
    assert "message_stop" not in names
    assert events[-1][1]["error"]["type"] == "api_error"
    assert "stopped mid-reply" in events[-1][1]["error"]["message"]

    with (
        pytest.raises(anthropic.APIError),
        proxy.anthropic().messages.stream(**ask("died_midway")) as stream,
    ):
        stream.get_final_message()


def test_slow_backend_gets_pings(fast_ping_proxy: RunningProxy) -> None:
    events = raw_events(fast_ping_proxy, ask("text delay=0.45"))
    names = [name for name, _ in events]
    assert names[0] == "message_start"
    first_block = names.index("content_block_start")
    assert names[1:first_block].count("ping") >= 2
    with fast_ping_proxy.anthropic().messages.stream(**ask("text delay=0.3")) as stream:
        assert stream.get_final_message().usage.input_tokens == 42


def test_inline_system_messages_stay_where_they_stood_as_reminders(
    proxy: RunningProxy, backend: ScriptedBackend
) -> None:
    # Qwen3 templates refuse a system message that is not first; merged into the first one,
    # a new inline message rewrote the front and vLLM prefilled the whole prompt again.
    proxy.anthropic().messages.create(
        model=CLAUDE,
        max_tokens=64,
        system=[
            {"type": "text", "text": "You are a coding agent."},
            {"type": "text", "text": "Be brief."},
        ],
        messages=[
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": "hi"},
            {"role": "system", "content": "The user's repo is Python."},  # type: ignore[typeddict-item]
            {"role": "user", "content": [{"type": "text", "text": "scenario:text"}]},
            {"role": "system", "content": [{"type": "text", "text": "Reply in English."}]},  # type: ignore[typeddict-item]
        ],
    )
    messages = backend.last("/v1/chat/completions").body["messages"]
    assert messages == [
        {"role": "system", "content": "You are a coding agent.\n\nBe brief."},
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "hi"},
        {"role": "user", "content": "<system-reminder>\nThe user's repo is Python.\n</system-reminder>"},
        {
            "role": "user",
            "content": "scenario:text\n\n<system-reminder>\nReply in English.\n</system-reminder>",
        },
    ]


def test_tool_results_round_trip(proxy: RunningProxy, backend: ScriptedBackend) -> None:
    message = proxy.anthropic().messages.create(
        model=CLAUDE,
        max_tokens=64,
        tools=WEATHER_TOOLS,
        messages=[
            {"role": "user", "content": "weather and time in Paris?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "need both tools", "signature": "sig"},
                    {"type": "redacted_thinking", "data": "opaque"},
                    {"type": "text", "text": "Checking."},
                    {
                        "type": "tool_use",
                        "id": "call_a",
                        "name": "get_weather",
                        "input": {"city": "Paris"},
                    },
                    {
                        "type": "tool_use",
                        "id": "call_b",
                        "name": "get_time",
                        "input": {"timezone": "Europe/Paris"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "call_a", "content": "18 C, sunny"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "call_b",
                        "is_error": True,
                        "content": [{"type": "text", "text": "clock service down"}],
                    },
                    {"type": "text", "text": "scenario:text"},
                ],
            },
        ],
    )
    assert message.content[0].type == "text"
    messages = backend.last("/v1/chat/completions").body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user"]
    assistant = messages[1]
    assert assistant["content"] == "Checking."  # thinking never goes back as text
    assert "need both tools" not in json.dumps(messages)
    assert [call["id"] for call in assistant["tool_calls"]] == ["call_a", "call_b"]
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}
    assert messages[2] == {"role": "tool", "content": "18 C, sunny", "tool_call_id": "call_a"}
    assert messages[3]["tool_call_id"] == "call_b"
    assert messages[3]["content"] == "Error: clock service down"
    assert messages[4] == {"role": "user", "content": "scenario:text"}


@pytest.mark.parametrize(
    ("tool_choice", "expected"),
    [
        (None, "auto"),
        ({"type": "auto"}, "auto"),
        ({"type": "any"}, "required"),
        ({"type": "none"}, "none"),
        (
            {"type": "tool", "name": "get_time"},
            {"type": "function", "function": {"name": "get_time"}},
        ),
    ],
)
def test_tool_choice_is_always_forwarded(
    proxy: RunningProxy, backend: ScriptedBackend, tool_choice: object, expected: object
) -> None:
    extra = {"tools": WEATHER_TOOLS}
    if tool_choice is not None:
        extra["tool_choice"] = tool_choice
    proxy.anthropic().messages.create(**ask("text", **extra))
    sent = backend.last("/v1/chat/completions").body
    assert sent["tool_choice"] == expected
    assert sent["tools"][0] == {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }


def test_sampling_parameters_are_forwarded(proxy: RunningProxy, backend: ScriptedBackend) -> None:
    proxy.anthropic().messages.create(
        **ask("text"),
        # This SDK version has no sampling arguments; clients still send them in the body.
        extra_body={"temperature": 0.2, "top_p": 0.9, "top_k": 20},
        metadata={"user_id": "u-1"},
        thinking={"type": "enabled", "budget_tokens": 2048},
    )
    sent = backend.last("/v1/chat/completions").body
    assert sent["max_tokens"] == 256
    assert sent["stop"] == ["</answer>"]
    assert (sent["temperature"], sent["top_p"], sent["top_k"]) == (0.2, 0.9, 20)
    assert sent["chat_template_kwargs"] == {"enable_thinking": True}
    assert "metadata" not in sent
    assert sent["stream"] is False


def test_images_become_image_urls(proxy: RunningProxy, backend: ScriptedBackend) -> None:
    proxy.anthropic().messages.create(
        model=CLAUDE,
        max_tokens=32,
        messages=[
            {
                "role": "user",
                "content": [
                    {
                        "type": "image",
                        "source": {
                            "type": "base64",
                            "media_type": "image/png",
                            "data": "iVBORw0KGgo=",
                        },
                    },
                    {
                        "type": "image",
                        "source": {"type": "url", "url": "https://example.com/a.png"},
                    },
                    {"type": "text", "text": "scenario:text"},
                ],
            }
        ],
    )
    content = backend.last("/v1/chat/completions").body["messages"][0]["content"]
    assert content == [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        {"type": "text", "text": "scenario:text"},
    ]


def test_count_tokens_uses_the_backend_tokenizer(
    proxy: RunningProxy, backend: ScriptedBackend
) -> None:
    result = proxy.anthropic().messages.count_tokens(
        model=CLAUDE,
        system="You are terse.",
        tools=WEATHER_TOOLS,
        messages=[{"role": "user", "content": "How many tokens is this?"}],
    )
    sent = backend.last("/tokenize").body
    assert sent["model"] == SERVED_MODEL
    assert sent["messages"][0] == {"role": "system", "content": "You are terse."}
    assert sent["tools"][0]["function"]["name"] == "get_weather"
    assert sent["add_generation_prompt"] is True
    assert result.input_tokens == len(json.dumps(sent["messages"])) // 4 + 3


def test_alias_and_default_model(
    proxy: RunningProxy, proxy_with_default: RunningProxy, backend: ScriptedBackend
) -> None:
    with pytest.raises(anthropic.NotFoundError) as caught:
        proxy.anthropic().messages.create(**ask("text", model="mystery-model"))
    assert "mystery-model" in caught.value.message
    assert "qwen3-coder" in caught.value.message
    assert caught.value.body["error"]["type"] == "not_found_error"

    message = proxy_with_default.anthropic().messages.create(**ask("text", model="mystery-model"))
    assert message.model == SERVED_MODEL
    assert backend.last("/v1/chat/completions").body["model"] == SERVED_MODEL


def test_auth_failures_are_anthropic_401s(proxy: RunningProxy) -> None:
    with pytest.raises(anthropic.AuthenticationError) as caught:
        proxy.anthropic(api_key="sk-wrong").messages.create(**ask("text"))
    assert caught.value.body["error"]["type"] == "authentication_error"
    assert "sk-wrong" not in caught.value.message

    response = httpx.post(proxy.base_url + "/v1/messages", json=ask("text"))
    assert response.status_code == 401
    assert response.json()["type"] == "error"
    assert "missing API key" in response.json()["error"]["message"]

    bearer = anthropic.Anthropic(
        base_url=proxy.base_url, auth_token=ALICE_KEY, api_key=None, max_retries=0
    )
    assert bearer.messages.create(**ask("text")).stop_reason == "end_turn"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"{not json", "body is not valid JSON"),
        (b"[1, 2]", "body must be a JSON object"),
        (
            json.dumps({"model": CLAUDE, "messages": [{"role": "user", "content": "x"}]}).encode(),
            "max_tokens: Field required",
        ),
        (
            json.dumps(
                {
                    "model": CLAUDE,
                    "max_tokens": "many",
                    "messages": [{"role": "user", "content": "x"}],
                }
            ).encode(),
            "max_tokens: Input should be a valid integer",
        ),
        (
            json.dumps({"model": CLAUDE, "max_tokens": 5, "messages": "hello"}).encode(),
            "messages: Input should be a valid array",
        ),
        (
            json.dumps(
                {
                    "model": CLAUDE,
                    "max_tokens": 5,
                    "messages": [{"role": "user", "content": [{"type": "document", "source": {}}]}],
                }
            ).encode(),
            "messages.0.content.0",
        ),
        (
            json.dumps(
                {
                    "model": CLAUDE,
                    "max_tokens": 5,
                    "messages": [
                        {
                            "role": "user",
                            "content": [
                                {
                                    "type": "tool_use",
                                    "id": "x",
                                    "name": "f",
                                    "input": "not an object",
                                }
                            ],
                        }
                    ],
                }
            ).encode(),
            "messages.0.content.0.tool_use.input",
        ),
        (
            json.dumps(
                {
                    "model": CLAUDE,
                    "max_tokens": 5,
                    "tool_choice": {"type": "tool"},
                    "tools": WEATHER_TOOLS[:1],
                    "messages": [{"role": "user", "content": "x"}],
                }
            ).encode(),
            "tool_choice.name",
        ),
    ],
)
def test_malformed_requests_get_400_naming_the_field(
    proxy: RunningProxy, body: bytes, expected: str
) -> None:
    response = httpx.post(
        proxy.base_url + "/v1/messages",
        content=body,
        headers={"x-api-key": ALICE_KEY, "content-type": "application/json"},
    )
    assert response.status_code == 400, response.text
    payload = response.json()
    assert payload["type"] == "error"
    assert payload["error"]["type"] == "invalid_request_error"
    assert expected in payload["error"]["message"]


def test_empty_messages_via_sdk(proxy: RunningProxy) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        proxy.anthropic().messages.create(model=CLAUDE, max_tokens=5, messages=[])
    assert "messages" in caught.value.message


def test_oversized_body_is_refused(start_proxy, base_settings) -> None:  # type: ignore[no-untyped-def]
    small = start_proxy(replace(base_settings, max_body_bytes=4096))
    body = json.dumps(ask("x" * 5000)).encode()
    headers = {"x-api-key": ALICE_KEY, "content-type": "application/json"}

    def chunked():  # no Content-Length: the limit must hold while reading, too
        yield body[:3000]
        yield body[3000:]

    for content in (body, chunked()):
        response = httpx.post(small.base_url + "/v1/messages", content=content, headers=headers)
        assert response.status_code == 413
        assert response.json()["error"]["type"] == "request_too_large"
        assert "over the 0.00390625 MiB limit" in response.json()["error"]["message"]


def test_backend_down_is_overloaded(dead_backend_proxy: RunningProxy) -> None:
    client = dead_backend_proxy.anthropic()
    with pytest.raises(anthropic.APIStatusError) as caught:
        client.messages.create(**ask("text", model=SERVED_MODEL))
    assert caught.value.status_code == 529
    assert caught.value.body["error"]["type"] == "overloaded_error"
    assert "not reachable" in caught.value.message
    with (
        pytest.raises(anthropic.APIStatusError) as caught,
        client.messages.stream(**ask("text", model=SERVED_MODEL)) as stream,
    ):
        stream.get_final_message()
    assert caught.value.status_code == 529


def test_backend_error_keeps_its_message(proxy: RunningProxy) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        proxy.anthropic().messages.create(**ask("backend_error"))
    assert "max_tokens is too large" in caught.value.message
