"""OpenAI pass-through through the official openai SDK: bytes unchanged but for
`"tool_calls": []`, aliases, auth and errors in OpenAI's shape."""

from __future__ import annotations

import json

import httpx
import openai
import pytest

from tests.support.proxy.running import ALICE_KEY, RunningProxy
from tests.support.proxy.scripted_backend import (
    RECORDED_SCENARIOS,
    SERVED_MODEL,
    STREAMS,
    ScriptedBackend,
)

pytestmark = pytest.mark.integration



def without_empty_tool_calls(recorded: bytes) -> bytes:
    # vLLM writes compact JSON and never puts tool_calls first in a delta or message.
    return recorded.replace(b',"tool_calls":[]', b"")


def chat(scenario: str, **extra: object) -> dict[str, object]:
    return {
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": f"scenario:{scenario}"}],
        **extra,
    }


@pytest.mark.parametrize("scenario", RECORDED_SCENARIOS)
def test_stream_is_byte_exact_except_empty_tool_calls(proxy: RunningProxy, scenario: str) -> None:
    with httpx.stream(
        "POST",
        proxy.base_url + "/v1/chat/completions",
        json=chat(scenario, stream=True),
        headers={"authorization": f"Bearer {ALICE_KEY}"},
    ) as response:
        assert response.status_code == 200
        received = response.read()
    recorded = (STREAMS / f"{scenario}.sse").read_bytes()
    assert recorded.count(b'"tool_calls":[]') > 0
    assert received == without_empty_tool_calls(recorded)


@pytest.mark.parametrize("scenario", RECORDED_SCENARIOS)
def test_plain_reply_is_byte_exact_except_empty_tool_calls(
    proxy: RunningProxy, scenario: str
) -> None:
    response = httpx.post(
        proxy.base_url + "/v1/chat/completions",
        json=chat(scenario),
        headers={"authorization": f"Bearer {ALICE_KEY}"},
    )
    assert response.status_code == 200
    recorded = (STREAMS / f"{scenario}.json").read_bytes()
    assert response.content == without_empty_tool_calls(recorded)


def test_sdk_stream_sees_no_phantom_tool_calls(proxy: RunningProxy) -> None:
    stream = proxy.openai().chat.completions.create(**chat("text", stream=True))
    chunks = list(stream)
    deltas = [chunk.choices[0].delta for chunk in chunks if chunk.choices]
    assert all(delta.tool_calls is None for delta in deltas)
    text = "".join(delta.content or "" for delta in deltas)
    assert text.endswith("café ☕.")
    assert chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens == 42


def test_sdk_stream_accumulates_interleaved_tool_calls(proxy: RunningProxy) -> None:
    stream = proxy.openai().chat.completions.create(
        **chat("two_tool_calls_interleaved", stream=True)
    )
    calls: dict[int, dict[str, str]] = {}
    finish = None
    for chunk in stream:
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
            for call in choice.delta.tool_calls or []:
                entry = calls.setdefault(call.index, {"name": "", "arguments": ""})
                entry["name"] += call.function.name or ""
                entry["arguments"] += call.function.arguments or ""
    assert finish == "tool_calls"
    assert calls[0]["name"] == "get_weather"
    assert json.loads(calls[0]["arguments"]) == {"city": "Paris", "unit": "celsius"}
    assert json.loads(calls[1]["arguments"]) == {"timezone": "Europe/Paris"}


def test_sdk_plain_reply(proxy: RunningProxy, backend: ScriptedBackend) -> None:
    completion = proxy.openai().chat.completions.create(**chat("text"))
    assert completion.choices[0].message.tool_calls is None
    assert completion.choices[0].message.content.startswith("The function")
    assert backend.last("/v1/chat/completions").body["model"] == SERVED_MODEL

    with_tools = proxy.openai().chat.completions.create(**chat("one_tool_call"))
    call = with_tools.choices[0].message.tool_calls[0]
    assert json.loads(call.function.arguments) == {"path": "src/main.py", "start_line": 10}


def test_completions_are_forwarded(proxy: RunningProxy, backend: ScriptedBackend) -> None:
    response = proxy.openai().completions.with_raw_response.create(
        model="gpt-4o-mini", prompt="scenario:max_tokens", max_tokens=4
    )
    assert response.http_response.status_code == 200
    sent = backend.last("/v1/completions").body
    assert sent == {"model": SERVED_MODEL, "prompt": "scenario:max_tokens", "max_tokens": 4}


def test_models_lists_served_names_and_aliases(proxy: RunningProxy) -> None:
    models = {model.id: model for model in proxy.openai().models.list()}
    assert set(models) == {SERVED_MODEL, "claude-*", "gpt-4o*"}
    assert models["claude-*"].model_extra["alias_of"] == SERVED_MODEL

    listed = proxy.anthropic().models.list()
    assert [model.id for model in listed.data] == [SERVED_MODEL, "claude-*", "gpt-4o*"]


def test_tokenize_is_forwarded_with_the_served_model(
    proxy: RunningProxy, backend: ScriptedBackend
) -> None:
    response = httpx.post(
        proxy.base_url + "/tokenize",
        json={"model": "gpt-4o", "prompt": "hello world"},
        headers={"authorization": f"Bearer {ALICE_KEY}"},
    )
    assert response.status_code == 200
    assert response.json()["count"] == len(json.dumps("hello world")) // 4 + 3
    assert backend.last("/tokenize").body == {"model": SERVED_MODEL, "prompt": "hello world"}


def test_unknown_model_is_openai_not_found(proxy: RunningProxy) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        proxy.openai().chat.completions.create(**chat("text", model="llama-9000"))
    assert caught.value.code == "model_not_found"
    assert "llama-9000" in caught.value.message


def test_default_model_catches_any_name(proxy_with_default: RunningProxy) -> None:
    completion = proxy_with_default.openai().chat.completions.create(
        **chat("text", model="llama-9000")
    )
    assert completion.model == SERVED_MODEL


def test_auth_failures_are_openai_401s(proxy: RunningProxy) -> None:
    with pytest.raises(openai.AuthenticationError) as caught:
        proxy.openai(api_key="sk-nope").chat.completions.create(**chat("text"))
    assert caught.value.code == "invalid_api_key"
    assert "sk-nope" not in str(caught.value)
    with pytest.raises(openai.AuthenticationError):
        proxy.openai(api_key="sk-nope").models.list()
    # x-api-key works on OpenAI routes too.
    response = httpx.post(
        proxy.base_url + "/v1/chat/completions", json=chat("text"), headers={"x-api-key": ALICE_KEY}
    )
    assert response.status_code == 200


def test_health_is_open(proxy: RunningProxy) -> None:
    assert httpx.get(proxy.base_url + "/health").json() == {"status": "ok"}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"{oops", "body is not valid JSON"),
        (b'"just a string"', "body must be a JSON object"),
        (b'{"messages": []}', "model: Field required"),
        (b'{"model": 7, "messages": []}', "model: Field required"),
    ],
)
def test_malformed_requests_are_openai_400s(
    proxy: RunningProxy, body: bytes, expected: str
) -> None:
    response = httpx.post(
        proxy.base_url + "/v1/chat/completions",
        content=body,
        headers={"authorization": f"Bearer {ALICE_KEY}", "content-type": "application/json"},
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert expected in error["message"]


def test_backend_errors_pass_through(proxy: RunningProxy) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        proxy.openai().chat.completions.create(**chat("backend_error"))
    assert "max_tokens is too large" in caught.value.message
    with pytest.raises(openai.BadRequestError):
        proxy.openai().chat.completions.create(**chat("backend_error", stream=True))


def test_backend_down_is_503(dead_backend_proxy: RunningProxy) -> None:
    with pytest.raises(openai.InternalServerError) as caught:
        dead_backend_proxy.openai().chat.completions.create(**chat("text", model=SERVED_MODEL))
    assert caught.value.status_code == 503
    assert "not reachable" in caught.value.message


def test_backend_dying_mid_stream_raises_in_the_sdk(proxy: RunningProxy) -> None:
    stream = proxy.openai().chat.completions.create(**chat("died_midway", stream=True))
    received = []
    with pytest.raises(openai.APIError) as caught:
        for chunk in stream:
            received.extend(choice.delta.content or "" for choice in chunk.choices)
    assert "".join(received) == "Refactoring the module now"
    assert "stopped mid-reply" in caught.value.message


def test_unknown_path_is_an_openai_404(proxy: RunningProxy) -> None:
    response = httpx.get(proxy.base_url + "/v1/nothing-here")
    assert response.status_code == 404
    assert "no such endpoint" in response.json()["error"]["message"]
