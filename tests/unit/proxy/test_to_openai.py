"""Anthropic request -> OpenAI request, without a server."""

from __future__ import annotations

import pytest

from stackctl.proxy.anthropic.to_openai import (
    translate_count_tokens_request,
    translate_messages_request,
)
from stackctl.proxy.errors import InvalidRequest
from stackctl.proxy.protocol.anthropic import CountTokensRequest, MessagesRequest


def request(**fields: object) -> MessagesRequest:
    base: dict[str, object] = {
        "model": "claude-x",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}],
    }
    base.update(fields)
    return MessagesRequest.model_validate(base)


def dumped(req: MessagesRequest) -> dict:
    return translate_messages_request(req, "served").model_dump(exclude_none=True)


def test_minimal_request() -> None:
    assert dumped(request()) == {
        "model": "served",
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 10,
        "stream": False,
    }


def test_streaming_asks_for_usage_once_at_the_end() -> None:
    """Not on every chunk (`continuous_usage_stats`): that costs vLLM TTFT and throughput."""
    out = dumped(request(stream=True))
    assert out["stream"] is True
    assert out["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize(
    ("system", "inline_positions", "expected"),
    [
        ("top", [], "top"),
        ([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], [], "a\n\nb"),
        (None, [0], "inline-0"),
        ("top", [0, 2, 4], "top\n\ninline-0\n\ninline-2\n\ninline-4"),
        (None, [], None),
    ],
)
def test_front_placement_merges_all_system_text_into_one_leading_message(
    system: object, inline_positions: list[int], expected: str | None
) -> None:
    turns: list[dict[str, object]] = [
        {"role": "user", "content": "u1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "u2"},
    ]
    for position in inline_positions:
        turns.insert(position, {"role": "system", "content": f"inline-{position}"})
    chat = translate_messages_request(request(system=system, messages=turns), "served", "front")
    out = chat.model_dump(exclude_none=True)
    roles = [m["role"] for m in out["messages"]]
    if expected is None:
        assert "system" not in roles
    else:
        assert roles == ["system", "user", "assistant", "user"]
        assert out["messages"][0]["content"] == expected


def test_tool_results_come_first_then_user_content() -> None:
    out = dumped(
        request(
            messages=[
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {"x": 1}}],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "also this"},
                        {
                            "type": "tool_result",
                            "tool_use_id": "t1",
                            "content": [
                                {"type": "text", "text": "line 1"},
                                {"type": "text", "text": "line 2"},
                                {
                                    "type": "image",
                                    "source": {"type": "url", "url": "http://x/p.png"},
                                },
                            ],
                        },
                    ],
                },
            ]
        )
    )
    assert out["messages"] == [
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "t1", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}
            ],
        },
        {"role": "tool", "content": "line 1\nline 2", "tool_call_id": "t1"},
        # The result's image rides with the user's own content, in order of appearance.
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "also this"},
                {"type": "image_url", "image_url": {"url": "http://x/p.png"}},
            ],
        },
    ]


def test_error_results_say_so_and_empty_results_stay_valid() -> None:
    out = dumped(
        request(
            messages=[
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "a",
                            "is_error": True,
                            "content": "boom",
                        },
                        {"type": "tool_result", "tool_use_id": "b"},
                        {"type": "tool_result", "tool_use_id": "c", "is_error": True},
                    ],
                }
            ]
        )
    )
    assert [m["content"] for m in out["messages"]] == ["Error: boom", "", "Error"]


def test_thinking_is_never_sent_back_as_text() -> None:
    out = dumped(
        request(
            messages=[
                {"role": "user", "content": "q"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "secret plan", "signature": "s"},
                        {"type": "redacted_thinking", "data": "xyz"},
                    ],
                },
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "more", "signature": "s"},
                        {"type": "text", "text": "answer"},
                    ],
                },
            ]
        )
    )
    assert out["messages"] == [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "answer"},
    ]


def test_tools_and_choice() -> None:
    out = dumped(
        request(
            tools=[
                {"name": "f", "input_schema": {"type": "object"}, "cache_control": {"x": 1}},
                {"type": "web_search_20250305", "name": "web_search"},
            ],
            tool_choice={"type": "any", "disable_parallel_tool_use": True},
        )
    )
    assert out["tools"] == [
        {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    ]
    assert out["tool_choice"] == "required"
    assert out["parallel_tool_calls"] is False


def test_tool_choice_without_tools_is_not_sent() -> None:
    # vLLM rejects tool_choice without tools.
    assert "tool_choice" not in dumped(request(tool_choice={"type": "auto"}))


def test_custom_tool_needs_a_schema() -> None:
    with pytest.raises(InvalidRequest, match=r"tools\.0\.input_schema"):
        dumped(request(tools=[{"name": "f"}]))


@pytest.mark.parametrize(
    ("thinking", "kwargs"),
    [
        ({"type": "enabled", "budget_tokens": 1000}, {"enable_thinking": True}),
        ({"type": "adaptive"}, {"enable_thinking": True}),
        ({"type": "disabled"}, {"enable_thinking": False}),
    ],
)
def test_thinking_switch(thinking: dict, kwargs: dict) -> None:
    assert dumped(request(thinking=thinking))["chat_template_kwargs"] == kwargs


def test_effort_becomes_reasoning_effort() -> None:
    assert dumped(request(output_config={"effort": "high"}))["reasoning_effort"] == "high"


def test_unknown_top_level_fields_are_ignored() -> None:
    out = dumped(
        request(metadata={"user_id": "x"}, service_tier="auto", context_management={"edits": []})
    )
    assert "metadata" not in out and "service_tier" not in out


def test_count_tokens_request() -> None:
    req = CountTokensRequest.model_validate(
        {
            "model": "m",
            "system": "s",
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"name": "f", "input_schema": {"type": "object"}}],
        }
    )
    out = translate_count_tokens_request(req, "served").model_dump(exclude_none=True)
    assert out["messages"][0] == {"role": "system", "content": "s"}
    assert out["tools"][0]["function"]["name"] == "f"
    assert out["add_generation_prompt"] is True


def test_deferred_tools_are_offered_once_a_tool_reference_loads_them() -> None:
    tools = [
        {"name": "Bash", "input_schema": {"type": "object"}},
        {"name": "WebFetch", "input_schema": {"type": "object"}, "defer_loading": True},
        {"name": "DeferredToolPlaceholder", "input_schema": {"type": "object"}, "defer_loading": True},
    ]
    before = dumped(request(tools=tools))
    assert [t["function"]["name"] for t in before["tools"]] == ["Bash"]
    # Claude Code's ToolSearch result, as 2.1.330 sends it.
    after = dumped(request(tools=tools, messages=[
        {"role": "user", "content": "fetch it"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ToolSearch",
                                           "input": {"query": "select:WebFetch"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": [{"type": "tool_reference", "tool_name": "WebFetch"}]}]},
    ]))
    assert [t["function"]["name"] for t in after["tools"]] == ["Bash", "WebFetch"]
    assert after["messages"][-1] == {"role": "tool", "tool_call_id": "t1", "content": "Tool loaded: WebFetch"}


def test_every_effort_claude_code_offers_passes_on() -> None:
    for effort in ("low", "medium", "high", "xhigh", "max"):
        assert dumped(request(output_config={"effort": effort}))["reasoning_effort"] == effort
