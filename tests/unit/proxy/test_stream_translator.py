"""The streaming state machine, fed recorded vLLM streams and hand-made edge cases."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from stackctl.proxy.anthropic.stream_translator import AnthropicStreamTranslator
from stackctl.proxy.errors import BackendError
from stackctl.proxy.protocol.openai_stream import ChatCompletionChunk, decode_chunk
from stackctl.proxy.protocol.sse import EventSplitter, event_data

STREAMS = Path(__file__).resolve().parents[2] / "data" / "vllm_streams"


def events_of(encoded: bytes) -> list[dict]:
    out = []
    for block in encoded.decode().split("\n\n"):
        if block:
            name_line, data_line = block.split("\n")
            data = json.loads(data_line.removeprefix("data: "))
            assert name_line == f"event: {data['type']}"
            out.append(data)
    return out


def translate(raw: bytes, stop_sequences: list[str] | None = None) -> list[dict]:
    translator = AnthropicStreamTranslator(model="fallback", stop_sequences=stop_sequences)
    out = b""
    for event in EventSplitter().feed(raw):
        payload = event_data(event)
        if payload == b"[DONE]":
            out += translator.finish()
        elif payload:
            out += translator.feed(decode_chunk(payload))
    return events_of(out)


def chunk(delta: dict, finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-x",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def accumulate(events: list[dict]) -> dict:
    """A tiny reference accumulator: what any Anthropic client reconstructs."""
    message = events[0]["message"]
    blocks: dict[int, dict] = {}
    partial: dict[int, str] = {}
    for event in events[1:]:
        kind = event["type"]
        if kind == "content_block_start":
            blocks[event["index"]] = dict(event["content_block"])
        elif kind == "content_block_delta":
            delta, index = event["delta"], event["index"]
            if delta["type"] == "text_delta":
                blocks[index]["text"] += delta["text"]
            elif delta["type"] == "thinking_delta":
                blocks[index]["thinking"] += delta["thinking"]
            else:
                partial[index] = partial.get(index, "") + delta["partial_json"]
        elif kind == "message_delta":
            message = {**message, **event["delta"], "usage": event["usage"]}
    for index, text in partial.items():
        blocks[index]["input"] = json.loads(text)
    return {**message, "content": [blocks[i] for i in sorted(blocks)]}


def test_interleaved_tool_calls_become_sequential_blocks() -> None:
    events = translate((STREAMS / "two_tool_calls_interleaved.sse").read_bytes())
    message = accumulate(events)
    assert [b["type"] for b in message["content"]] == ["text", "tool_use", "tool_use"]
    assert message["content"][1]["input"] == {"city": "Paris", "unit": "celsius"}
    assert message["content"][2]["input"] == {"timezone": "Europe/Paris"}
    assert message["stop_reason"] == "tool_use"
    # The first call streamed live, the second arrived whole once the first was complete.
    deltas = [e for e in events if e["type"] == "content_block_delta" and e["index"] == 2]
    assert [d["delta"]["partial_json"] for d in deltas] == ['{"timezone": "Europe/', 'Paris"}']


@pytest.mark.parametrize(
    "scenario",
    [
        "text",
        "thinking",
        "one_tool_call",
        "stop_sequence",
        "max_tokens",
        "two_tool_calls_interleaved",
    ],
)
def test_recorded_streams_match_their_plain_replies(scenario: str) -> None:
    from stackctl.proxy.anthropic.from_openai import translate_completion
    from stackctl.proxy.protocol.openai import ChatCompletion

    streamed = accumulate(translate((STREAMS / f"{scenario}.sse").read_bytes(), ["</answer>"]))
    plain = translate_completion(
        ChatCompletion.model_validate_json((STREAMS / f"{scenario}.json").read_bytes()),
        stop_sequences=["</answer>"],
    ).model_dump()
    assert streamed == plain


def test_a_tool_call_that_never_completes_is_flushed_at_the_end() -> None:
    raw = (
        chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "a", "function": {"name": "f", "arguments": '{"x": '}}
                ]
            }
        )
        + chunk(
            {"tool_calls": [{"index": 1, "id": "b", "function": {"name": "g", "arguments": "{}"}}]}
        )
        + chunk({"tool_calls": [{"index": 0, "function": {"arguments": "1"}}]})
        + chunk({}, finish="tool_calls")
        + b"data: [DONE]\n\n"
    )
    events = translate(raw)
    # '{"x": 1' never parses, so g waited until the end; both are there, in order.
    starts = [e["content_block"]["name"] for e in events if e["type"] == "content_block_start"]
    assert starts == ["f", "g"]
    partial = [
        (e["index"], e["delta"]["partial_json"])
        for e in events
        if e["type"] == "content_block_delta"
    ]
    assert partial == [(0, '{"x": '), (0, "1"), (1, "{}")]
    assert events[-2]["delta"]["stop_reason"] == "tool_use"


def test_text_after_tool_call_and_parallel_choices() -> None:
    raw = (
        chunk({"content": "a"})
        + chunk(
            {"tool_calls": [{"index": 0, "id": "t", "function": {"name": "f", "arguments": "{}"}}]}
        )
        + chunk({"content": "b"})
        + chunk({}, finish="stop")
        + b"data: [DONE]\n\n"
    )
    message = accumulate(translate(raw))
    assert [b["type"] for b in message["content"]] == ["text", "tool_use", "text"]


def test_failure_mid_stream_ends_with_an_error_event() -> None:
    translator = AnthropicStreamTranslator(model="m", stop_sequences=None)
    out = translator.feed(
        msgspec.convert(
            {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"content": "x"}}]},
            ChatCompletionChunk,
        )
    )
    out += translator.fail(BackendError("gone", backend_status=502))
    events = events_of(out)
    assert [e["type"] for e in events] == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "error",
    ]
    assert events[-1]["error"] == {"type": "api_error", "message": "gone"}
    assert translator.finish() == b""


def test_start_before_any_chunk_then_real_usage_at_the_end() -> None:
    translator = AnthropicStreamTranslator(model="m", stop_sequences=None)
    early = events_of(translator.start())
    assert early[0]["message"]["usage"] == {
        "input_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 0,
    }
    assert translator.start() == b""
    translator.feed(
        msgspec.convert(
            {
                "id": "c",
                "model": "m",
                "choices": [],
                "usage": {"prompt_tokens": 5, "completion_tokens": 2},
            },
            ChatCompletionChunk,
        )
    )
    end = events_of(translator.finish())
    assert end[-2]["usage"] == {
        "input_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 2,
    }


def test_the_cached_share_is_read_from_vllms_last_usage_chunk() -> None:
    """vLLM with --enable-prompt-tokens-details and continuous usage: every chunk carries the
    prompt size, only the last one the cached share. message_start cannot know it yet; the
    message_delta's cumulative usage says it, as Anthropic counts: input_tokens the uncached rest
    (the SDKs and Claude Code take it from there)."""
    def sent(choices: list, usage: dict) -> bytes:
        return b"data: " + json.dumps({"id": "c", "model": "m", "choices": choices, "usage": usage}).encode() + b"\n\n"

    text = [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]
    raw = (
        sent(text, {"prompt_tokens": 426, "completion_tokens": 1})
        + sent([], {"prompt_tokens": 426, "completion_tokens": 1,
                    "prompt_tokens_details": {"cached_tokens": 384, "created_cache_tokens": 32}})
        + b"data: [DONE]\n\n"
    )  # fmt: skip
    events = translate(raw)
    assert events[0]["message"]["usage"]["input_tokens"] == 426
    assert events[-2]["usage"] == {
        "input_tokens": 42, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 384, "output_tokens": 1,
    }


def test_message_start_gives_the_estimate_when_usage_comes_only_at_the_end() -> None:
    """vLLM asked for usage once (include_usage, no continuous stats): the first chunk has none.
    message_start carries the proxy's estimate; message_delta the backend's own count."""
    def sent(choices: list, usage: dict | None) -> bytes:
        return b"data: " + json.dumps({"id": "c", "model": "m", "choices": choices, "usage": usage}).encode() + b"\n\n"

    translator = AnthropicStreamTranslator(model="m", stop_sequences=None, input_tokens_estimate=1200)
    out = b""
    raw = (
        sent([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}], None)
        + sent([{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}], None)
        + sent([], {"prompt_tokens": 1187, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": 0}})
    )  # fmt: skip
    for event in EventSplitter().feed(raw):
        out += translator.feed(decode_chunk(event_data(event)))
    events = events_of(out + translator.finish())
    assert events[0]["message"]["usage"]["input_tokens"] == 1200
    assert events[-2]["usage"]["input_tokens"] == 1187
    assert translator.input_tokens == 1187


def translated_bytes(raw: bytes, *, shortcut: bool, server_tools: frozenset[str] = frozenset()) -> tuple[bytes, int]:
    """The whole Anthropic stream, and how many chunks the per-token shortcut took."""
    translator = AnthropicStreamTranslator(model="fallback", stop_sequences=None, server_tools=server_tools)
    out, taken = b"", 0
    for event in EventSplitter().feed(raw):
        payload = event_data(event)
        if payload == b"[DONE]":
            out += translator.finish()
        elif payload:
            fast = translator.feed_text_token(payload) if shortcut else None
            if fast is not None:
                taken += 1
                out += fast
            else:
                out += translator.feed(decode_chunk(payload))
    return out, taken


@pytest.mark.parametrize("scenario", sorted(path.stem for path in STREAMS.glob("*.sse")))
def test_the_text_token_shortcut_writes_what_feed_writes(scenario: str) -> None:
    raw = (STREAMS / f"{scenario}.sse").read_bytes()
    slow, _ = translated_bytes(raw, shortcut=False)
    fast, taken = translated_bytes(raw, shortcut=True)
    assert fast == slow
    if scenario in ("text", "stop_sequence", "max_tokens"):
        assert taken >= 1  # text tokens after the first take the shortcut
    if scenario == "text":
        assert taken > 10


def test_the_shortcut_declines_every_chunk_that_is_not_only_text() -> None:
    translator = AnthropicStreamTranslator(model="m", stop_sequences=None)
    text = b'{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi \\"x\\" caf\xc3\xa9","tool_calls":[]},"logprobs":null,"finish_reason":null}]}'
    assert translator.feed_text_token(text) is None  # no text block open yet
    translator.feed(decode_chunk(text))
    event = translator.feed_text_token(text)
    assert event is not None and events_of(event) == [
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": 'Hi "x" café'}}
    ]
    # vLLM 0.24.0 (its chat_completion/serving.py) drops the empty tool_calls and sets token_ids.
    newer = text.replace(b',"tool_calls":[]', b"").replace(b'"finish_reason":null', b'"finish_reason":null,"token_ids":null')
    assert translator.feed_text_token(newer) == event
    for other in (
        text.replace(b'"finish_reason":null', b'"finish_reason":"stop"'),
        newer.replace(b'"token_ids":null', b'"token_ids":[17]'),
        text.replace(b'"tool_calls":[]', b'"tool_calls":[{"index":0,"function":{"arguments":"{"}}]'),
        text.replace(b'"index":0,"delta"', b'"index":1,"delta"'),
        text.replace(b'"content":"Hi \\"x\\" caf\xc3\xa9"', b'"content":""'),
        text[:-1] + b',"usage":{"prompt_tokens":3,"total_tokens":5,"completion_tokens":2}}',
        text.replace(b'{"content"', b'{"reasoning_content":"hm","content"'),
    ):
        assert translator.feed_text_token(other) is None, other
    searching = AnthropicStreamTranslator(model="m", stop_sequences=None, server_tools=frozenset({"web_search"}))
    searching.feed(decode_chunk(text))
    assert searching.feed_text_token(text) is None  # the turn's text is recorded for the search loop
