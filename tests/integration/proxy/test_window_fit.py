"""max_tokens fitted to the model's window, through the official SDKs and the scripted backend
(a vLLM stand-in with a window: it refuses as vLLM 0.32 does, or, with `refuses_overflow`, as
releases that also refuse prompt + max_tokens past the window)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace

import anthropic
import httpx
import openai
import pytest

from stackctl.proxy.settings import ProxySettings
from tests.support.proxy.running import RunningProxy, served
from tests.support.proxy.scripted_backend import (
    SERVED_MODEL,
    ScriptedBackend,
    Turn,
    prompt_tokens,
)

pytestmark = pytest.mark.integration

WINDOW = 8192
CLAUDE_CODE_ASKS = 32000  # what Claude Code sends as max_tokens with ANTHROPIC_MODEL set


@pytest.fixture
def windowed() -> Iterator[tuple[ScriptedBackend, str]]:
    yield from served(ScriptedBackend(window=WINDOW))


@pytest.fixture
def fit_proxy(start_proxy, base_settings: ProxySettings, windowed) -> RunningProxy:  # type: ignore[no-untyped-def]
    """A proxy of its own (what it learns stays in this test) in front of the windowed backend."""
    return start_proxy(replace(base_settings, backend_url=windowed[1]))


def conversation(key: str, turns: int, filler: int = 12_000) -> list[dict]:
    """A Claude Code-like conversation: a long first prompt, then short turns."""
    messages: list[dict] = [{"role": "user", "content": f"script:{key} " + "lorem ipsum " * (filler // 12)}]
    for turn in range(turns - 1):
        messages += [{"role": "assistant", "content": f"answer {turn}"}, {"role": "user", "content": f"more {turn}"}]
    return messages


def sent(backend: ScriptedBackend, key: str) -> list[tuple[int, int]]:
    """(max_tokens, prompt tokens) of each request the backend got for this script."""
    return [(body["max_tokens"], prompt_tokens(body)) for body in backend.script_requests(key)]


def fits(proxy: RunningProxy) -> dict[str, float]:
    text = httpx.get(proxy.base_url + "/metrics").text
    lines = [line for line in text.splitlines() if line.startswith("stackctl_proxy_context_fits_total")]
    return {line.split('"')[1]: float(line.split()[-1]) for line in lines}


def claude_code_turn(proxy: RunningProxy, messages: list[dict], stream: bool = True) -> str:
    client = proxy.anthropic()
    request = {"model": "claude-sonnet-4-6", "max_tokens": CLAUDE_CODE_ASKS, "messages": messages}
    if stream:
        with client.messages.stream(**request) as events:  # type: ignore[arg-type]
            return events.get_final_message().content[0].text  # type: ignore[union-attr]
    return client.messages.create(**request).content[0].text  # type: ignore[arg-type, union-attr]


def test_output_is_capped_to_the_window_then_to_what_the_prompt_leaves(fit_proxy, windowed) -> None:
    backend = windowed[0]
    backend.script("cap", [Turn(text="one"), Turn(text="two"), Turn(text="three")])
    assert claude_code_turn(fit_proxy, conversation("cap", 1)) == "one"
    assert claude_code_turn(fit_proxy, conversation("cap", 2), stream=False) == "two"
    assert claude_code_turn(fit_proxy, conversation("cap", 3)) == "three"
    first, *later = sent(backend, "cap")
    # Nothing learned yet: the window is the cap (vLLM refuses more than max_model_len).
    assert first[0] == WINDOW
    # Learned from the backend's usage: the window less the prompt, erring a little low.
    for max_tokens, prompt in later:
        assert WINDOW - prompt - 0.03 * prompt - 40 <= max_tokens <= WINDOW - prompt
    assert fits(fit_proxy)["capped"] == 3 and fits(fit_proxy)["retried"] == 0


def test_a_release_that_refuses_the_overflow_gets_one_corrected_retry(fit_proxy, windowed) -> None:
    backend = windowed[0]
    backend.refuses_overflow = True
    backend.script("retry", [Turn(text="one"), Turn(text="two")])
    assert claude_code_turn(fit_proxy, conversation("retry", 1)) == "one"
    (refused, prompt), (retried, _) = sent(backend, "retry")
    assert refused == WINDOW and retried == WINDOW - prompt  # the refusal stated the prompt exactly
    # The next turn of the conversation fits at once: no refusal, no extra round trip.
    assert claude_code_turn(fit_proxy, conversation("retry", 2), stream=False) == "two"
    assert len(sent(backend, "retry")) == 3
    assert fits(fit_proxy)["retried"] == 1


def test_a_prompt_over_the_window_is_claude_codes_prompt_too_long(fit_proxy, windowed) -> None:
    backend = windowed[0]
    messages = conversation("long", 1, filler=50_000)
    tokenized = len(json.dumps([{"role": "user", "content": messages[0]["content"]}])) // 4 + 3
    for stream in (True, False):
        with pytest.raises(anthropic.BadRequestError) as refused:
            claude_code_turn(fit_proxy, messages, stream=stream)
        # Claude Code matches /^prompt is too long: \d+ tokens > \d+ maximum$/ and compacts.
        assert refused.value.body["error"] == {  # type: ignore[index]
            "type": "invalid_request_error",
            "message": f"prompt is too long: {tokenized} tokens > {WINDOW} maximum",
        }
    # vLLM 0.32 stops counting past the window ("at least 8193"): /tokenize counted exactly.
    assert backend.last("/tokenize").body["messages"][0]["content"] == messages[0]["content"]
    assert fits(fit_proxy)["prompt_too_long"] == 2


def test_openai_routes_cap_the_field_the_client_used(fit_proxy, windowed) -> None:
    backend = windowed[0]
    client = fit_proxy.openai()
    backend.script("oa", [Turn(text="a"), Turn(text="b"), Turn(text="c")])
    ask = [{"role": "user", "content": "script:oa hi"}]
    client.chat.completions.create(model=SERVED_MODEL, messages=ask, max_tokens=100_000)  # type: ignore[arg-type]
    assert backend.script_requests("oa")[-1]["max_tokens"] == WINDOW
    list(client.chat.completions.create(model=SERVED_MODEL, messages=ask, stream=True,  # type: ignore[arg-type]
                                        max_completion_tokens=100_000))
    capped = backend.script_requests("oa")[-1]
    assert "max_tokens" not in capped and WINDOW - 100 < capped["max_completion_tokens"] < WINDOW
    client.chat.completions.create(model=SERVED_MODEL, messages=ask)  # type: ignore[arg-type]
    # Not asked for: vLLM gives what is left of the window by itself.
    assert "max_tokens" not in backend.script_requests("oa")[-1]


def test_openai_prompt_over_the_window_is_context_length_exceeded(fit_proxy) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        fit_proxy.openai().chat.completions.create(
            model=SERVED_MODEL, max_tokens=10, messages=[{"role": "user", "content": "x " * 40_000}]
        )
    error = refused.value.body
    assert error["code"] == "context_length_exceeded" and error["type"] == "invalid_request_error"  # type: ignore[index]
    assert error["message"].startswith(f"This model's maximum context length is {WINDOW} tokens. However, your messages resulted in ")  # type: ignore[index]


def test_a_window_that_shrank_since_the_model_list_is_learned_from_the_refusal(fit_proxy, windowed) -> None:
    backend = windowed[0]
    backend.window = 4096  # vLLM restarted with a shorter --max-model-len
    backend.script("shrunk", [Turn(text="ok")])
    message = fit_proxy.anthropic().messages.create(
        model="claude-sonnet-4-6", max_tokens=6000, messages=[{"role": "user", "content": "script:shrunk hi"}]
    )
    assert message.content[0].text == "ok"  # type: ignore[union-attr]
    assert [max_tokens for max_tokens, _ in sent(backend, "shrunk")] == [6000, 4096]
