"""Differential test against a real vLLM: the proxy's own translation and vLLM's native
/v1/messages must give the same text for the same deterministic (temperature 0) requests.

The demo model has random weights, so its text is gibberish; any difference in the rendered
prompt (system placement, tool rendering, message order) changes that gibberish, and the
prompt token counts must match exactly too.
"""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

pytestmark = [pytest.mark.integration, pytest.mark.vllm, pytest.mark.timeout(900)]

GREEDY = {"temperature": 0}  # this anthropic SDK takes sampling arguments only via extra_body
TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file from the repository.",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    }
]
CASES: dict[str, dict[str, Any]] = {
    "one_user_message": {
        "messages": [{"role": "user", "content": "Write a haiku about compilers."}],
    },
    "system_and_turns": {
        "system": "You are a terse coding assistant.",
        "messages": [
            {"role": "user", "content": "What does `git rebase` do?"},
            {"role": "assistant", "content": "It replays commits onto another base."},
            {"role": "user", "content": [{"type": "text", "text": "And `git merge`?"}]},
        ],
    },
    "tools_offered": {
        "system": "Use tools when they help.",
        "tools": TOOLS,
        "messages": [{"role": "user", "content": "Show me README.md"}],
    },
}


@pytest.fixture(scope="module")
def vllm_clients(real_vllm, proxy_over_vllm) -> tuple[anthropic.Anthropic, anthropic.Anthropic]:  # type: ignore[no-untyped-def]
    through_proxy = anthropic.Anthropic(base_url=proxy_over_vllm, api_key="unused", max_retries=0, timeout=300)
    native = anthropic.Anthropic(
        base_url=real_vllm.base_url,
        auth_token=real_vllm.api_key,
        api_key=None,
        max_retries=0,
        timeout=300,
    )
    return through_proxy, native


def prompt_tokens(message: anthropic.types.Message) -> int:
    usage = message.usage
    return usage.input_tokens + (usage.cache_read_input_tokens or 0) + (usage.cache_creation_input_tokens or 0)


def text_of(message: anthropic.types.Message) -> str:
    return "".join(block.text for block in message.content if block.type == "text")


@pytest.mark.parametrize("case", sorted(CASES))
def test_proxy_translation_matches_native_messages(
    real_vllm,
    vllm_clients: tuple[anthropic.Anthropic, anthropic.Anthropic],
    case: str,  # type: ignore[no-untyped-def]
) -> None:
    through_proxy, native = vllm_clients
    request = {"model": real_vllm.model, "max_tokens": 24, "extra_body": GREEDY, **CASES[case]}

    expected = native.messages.create(**request)
    got = through_proxy.messages.create(**request)
    with through_proxy.messages.stream(**request) as stream:
        streamed = stream.get_final_message()

    assert text_of(expected), "vLLM returned no text; the comparison would prove nothing"
    assert text_of(got) == text_of(expected)
    assert text_of(streamed) == text_of(expected)
    # The whole prompt: vLLM serves the repeated requests from its prefix cache, and a cached
    # token counts under cache_read_input_tokens, not input_tokens (Anthropic's definition).
    assert prompt_tokens(got) == prompt_tokens(expected)
    assert prompt_tokens(streamed) == prompt_tokens(expected)
    assert got.stop_reason == expected.stop_reason


def test_count_tokens_matches_the_prompt_vllm_renders(
    real_vllm,
    vllm_clients: tuple[anthropic.Anthropic, anthropic.Anthropic],  # type: ignore[no-untyped-def]
) -> None:
    through_proxy, native = vllm_clients
    case = CASES["system_and_turns"]
    counted = through_proxy.messages.count_tokens(model=real_vllm.model, **case)
    served = native.messages.create(model=real_vllm.model, max_tokens=1, extra_body=GREEDY, **case)
    assert counted.input_tokens == prompt_tokens(served)
