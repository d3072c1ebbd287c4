"""OpenAI completion -> Anthropic message, without a server."""

from __future__ import annotations

import pytest

from stackctl.proxy.anthropic.from_openai import (
    anthropic_usage,
    map_stop_reason,
    parse_tool_input,
    translate_completion,
)
from stackctl.proxy.protocol.openai import ChatCompletion, Usage


def completion(message: dict, finish: str = "stop", stop_reason: object = None) -> ChatCompletion:
    return ChatCompletion.model_validate(
        {
            "id": "chatcmpl-abc",
            "model": "served",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": finish,
                    "stop_reason": stop_reason,
                }
            ],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
        }
    )


def test_text_thinking_and_tools() -> None:
    reply = translate_completion(
        completion(
            {
                "role": "assistant",
                "reasoning": "hmm",
                "content": "calling",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "f", "arguments": '{"a": [1, 2]}'},
                    }
                ],
            },
            finish="tool_calls",
        ),
        stop_sequences=None,
    )
    assert reply.model_dump() == {
        "id": "msg_abc",
        "type": "message",
        "role": "assistant",
        "model": "served",
        "content": [
            {"type": "thinking", "thinking": "hmm", "signature": ""},
            {"type": "text", "text": "calling"},
            {"type": "tool_use", "id": "call_1", "name": "f", "input": {"a": [1, 2]}},
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 7,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 3,
        },
    }


def test_empty_tool_calls_and_empty_content_make_no_blocks() -> None:
    reply = translate_completion(
        completion({"role": "assistant", "content": "", "tool_calls": []}), stop_sequences=None
    )
    assert reply.content == []
    assert reply.stop_reason == "end_turn"


@pytest.mark.parametrize(
    ("finish", "backend_stop", "sequences", "tools", "expected"),
    [
        ("stop", None, None, False, ("end_turn", None)),
        ("length", None, None, True, ("max_tokens", None)),
        ("tool_calls", None, None, True, ("tool_use", None)),
        ("stop", None, None, True, ("tool_use", None)),  # named tool_choice finishes "stop"
        ("stop", "END", ["END"], False, ("stop_sequence", "END")),
        ("stop", 151643, ["END"], False, ("end_turn", None)),  # a stop token id, not a string
        ("stop", "other", ["END"], False, ("end_turn", None)),
        (None, None, None, False, ("end_turn", None)),
    ],
)
def test_stop_reasons(finish, backend_stop, sequences, tools, expected) -> None:  # type: ignore[no-untyped-def]
    assert map_stop_reason(finish, backend_stop, sequences, called_tools=tools) == expected


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ("", {}),
        ("  ", {}),
        ('{"a": 1}', {"a": 1}),
        ("[1]", {"_unparsed_arguments": "[1]"}),
        ('{"a": ', {"_unparsed_arguments": '{"a": '}),
    ],
)
def test_tool_input_parsing(arguments: str, expected: dict) -> None:
    assert parse_tool_input(arguments) == expected


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        # vLLM with --enable-prompt-tokens-details: input_tokens is the uncached rest.
        (
            {"prompt_tokens": 426, "completion_tokens": 3,
             "prompt_tokens_details": {"cached_tokens": 384, "created_cache_tokens": 0}},
            {"input_tokens": 42, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 384,
             "output_tokens": 3},
        ),
        # Without the flag (or before vllm-project/vllm#44383, nothing cached): all input.
        (
            {"prompt_tokens": 426, "completion_tokens": 3},
            {"input_tokens": 426, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
             "output_tokens": 3},
        ),
        (
            {"prompt_tokens": 10, "completion_tokens": 1, "prompt_tokens_details": None},
            {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
             "output_tokens": 1},
        ),
        # A backend claiming more cached than prompt tokens: never a negative input.
        (
            {"prompt_tokens": 10, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": 16}},
            {"input_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 10,
             "output_tokens": 1},
        ),
    ],
    ids=["cached", "no-details", "null-details", "over-reported"],
)
def test_cached_prompt_tokens_become_cache_reads(usage: dict, expected: dict) -> None:
    mapped = anthropic_usage(Usage.model_validate(usage))
    assert mapped.model_dump() == expected
    assert mapped.prompt_tokens == expected["input_tokens"] + expected["cache_read_input_tokens"]
