"""`/v1/responses` through the official openai SDK and raw HTTP, in front of the scripted backend
(which streams as vLLM 0.32's Responses endpoint does): aliases, keys, limits and metrics as on
every generating route; namespaced tools flattened for the model and restored for the client;
encrypted reasoning kept from vLLM; a backend that dies mid-reply ends the stream as the
Responses API allows; a client that leaves cancels the backend request."""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from itertools import pairwise

import httpx
import openai
import pytest

from stackctl.proxy.limit_settings import KeyLimits, LimitSettings
from tests.support.processes import eventually
from tests.support.proxy.running import ALICE_KEY, BOB_KEY, RunningProxy
from tests.support.proxy.scripted_backend import SERVED_MODEL, ScriptedBackend, Turn
from tests.support.proxy.scripted_responses import DEFAULT_TEXT

pytestmark = pytest.mark.integration

ROUTE = "/v1/responses"
SHELL = {
    "type": "function",
    "name": "exec_command",
    "description": "Runs a command.",
    "strict": False,
    "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]},
}
AGENTS = {  # Codex's sub-agent tools, as Codex sends them: a namespace
    "type": "namespace",
    "name": "multi_agent_v1",
    "description": "Tools for spawning and managing sub-agents.",
    "tools": [
        {"type": "function", "name": "spawn_agent", "strict": False,
         "parameters": {"type": "object", "properties": {"message": {"type": "string"}}}},
        {"type": "function", "name": "close_agent", "strict": False,
         "parameters": {"type": "object", "properties": {"target": {"type": "string"}}}},
    ],
}  # fmt: skip


def user(text: str) -> dict[str, object]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def sse_events(raw: bytes) -> list[dict]:
    events = []
    for block in raw.decode().split("\n\n"):
        data = [line[6:] for line in block.splitlines() if line.startswith("data: ")]
        if data:
            events.append(json.loads("\n".join(data)))
    return events


def test_a_streamed_reply_reaches_the_sdk_through_an_alias(proxy: RunningProxy, backend: ScriptedBackend) -> None:
    stream = proxy.openai().responses.create(model="gpt-4o-mini", input="hello", stream=True)
    events = list(stream)
    kinds = [event.type for event in events]
    assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == "response.completed"
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == DEFAULT_TEXT
    assert [e.sequence_number for e in events] == list(range(len(events)))
    sent = backend.last(ROUTE)
    assert sent.body["model"] == SERVED_MODEL and sent.body["input"] == "hello"
    # The backend gets the backend's key, never the client's.
    assert sent.headers["authorization"] == "Bearer sk-backend-secret"


def test_an_unstreamed_reply_and_its_usage(proxy: RunningProxy) -> None:
    reply = proxy.openai().responses.create(model=SERVED_MODEL, input=[user("hello")])  # type: ignore[list-item]
    assert reply.output_text == DEFAULT_TEXT and reply.status == "completed"
    assert reply.usage is not None and reply.usage.input_tokens > 0


def test_namespaced_tools_reach_the_model_flat_and_come_back_by_their_names(
    proxy: RunningProxy, backend: ScriptedBackend
) -> None:
    key = uuid.uuid4().hex[:10]
    call = ("multi_agent_v1__close_agent", {"target": "a1"})
    backend.script(key, [Turn(tool_calls=(call,)), Turn(tool_calls=(call,)), Turn(text="closed")])
    request = {"model": SERVED_MODEL, "input": [user(f"script:{key} close a1")], "tools": [SHELL, AGENTS],
               "tool_choice": {"type": "function", "name": "close_agent"}}  # fmt: skip
    response = httpx.post(proxy.base_url + ROUTE, json={**request, "stream": True},
                          headers={"authorization": f"Bearer {ALICE_KEY}"})  # fmt: skip
    assert response.status_code == 200, response.text
    events = sse_events(response.content)
    naming = ("response.output_item.added", "response.function_call_arguments.done", "response.output_item.done")
    named = [e.get("item", e) for e in events if e["type"] in naming]
    assert len(named) == 3
    assert all((e["namespace"], e["name"]) == ("multi_agent_v1", "close_agent") for e in named), named
    completed = events[-1]["response"]["output"][0]
    assert (completed["namespace"], completed["name"], completed["arguments"]) == (
        "multi_agent_v1", "close_agent", '{"target": "a1"}')  # fmt: skip
    # What the model saw: plain functions, the namespace's members by their flat names.
    first = backend.script_requests(key)[0]
    assert [tool["name"] for tool in first["tools"]] == [
        "exec_command", "multi_agent_v1__spawn_agent", "multi_agent_v1__close_agent"]  # fmt: skip
    assert {tool["type"] for tool in first["tools"]} == {"function"}
    assert first["tools"][1]["parameters"] == AGENTS["tools"][0]["parameters"]  # type: ignore[index]
    assert first["tool_choice"] == {"type": "function", "name": "multi_agent_v1__close_agent"}
    # Unstreamed, the same; the call sent back in the next turn reaches the model flat again.
    reply = proxy.openai().responses.create(**request)
    assert (reply.output[0].namespace, reply.output[0].name) == ("multi_agent_v1", "close_agent")  # type: ignore[union-attr]
    returned = {"type": "function_call", "call_id": "c1", "name": "close_agent", "namespace": "multi_agent_v1",
                "arguments": '{"target": "a1"}'}  # fmt: skip
    output = {"type": "function_call_output", "call_id": "c1", "output": "closed"}
    follow_up = {**request, "input": [*request["input"], returned, output]}  # type: ignore[list-item]
    assert proxy.openai().responses.create(**follow_up).output_text == "closed"  # type: ignore[arg-type]
    replayed = backend.script_requests(key)[-1]["input"][1]
    assert replayed == {"type": "function_call", "call_id": "c1", "name": "multi_agent_v1__close_agent",
                        "arguments": '{"target": "a1"}'}  # fmt: skip


def test_encrypted_reasoning_is_kept_from_vllm_and_readable_reasoning_is_not(
    proxy: RunningProxy, backend: ScriptedBackend
) -> None:
    key = uuid.uuid4().hex[:10]
    backend.script(key, [Turn(reasoning="Checking the list.", text="Done.")])
    # A session begun against OpenAI: its reasoning is opaque to any other server.
    opaque = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA-opaque"}
    summarized = {"type": "reasoning", "id": "rs_2", "encrypted_content": "gAAAA-opaque",
                  "summary": [{"type": "summary_text", "text": "Listed the files."}]}  # fmt: skip
    plain = {"type": "reasoning", "id": "rs_3", "summary": [],
             "content": [{"type": "reasoning_text", "text": "Read it."}], "encrypted_content": None}  # fmt: skip
    conversation = [user(f"script:{key} list"), opaque, summarized, plain, user("and now?")]
    stream = proxy.openai().responses.create(
        model=SERVED_MODEL, input=conversation, include=["reasoning.encrypted_content"], stream=True  # type: ignore[arg-type]
    )
    events = list(stream)
    # The model's reasoning streams to the client as vLLM sends it.
    assert "".join(e.delta for e in events if e.type == "response.reasoning_text.delta") == "Checking the list."
    assert events[-1].response.output[0].type == "reasoning"  # type: ignore[attr-defined]
    sent = backend.script_requests(key)[0]["input"]
    assert [item.get("id") for item in sent] == [None, "rs_2", "rs_3", None]
    assert "encrypted_content" not in sent[1] and sent[1]["summary"] == summarized["summary"]
    assert sent[2] == plain


def test_keys_limits_and_metrics_apply_as_on_every_generating_route(start_proxy, base_settings) -> None:  # type: ignore[no-untyped-def]
    limits = LimitSettings(overrides={"alice": KeyLimits(max_concurrent=1)})
    proxy = start_proxy(replace(base_settings, limits=limits))
    with pytest.raises(openai.AuthenticationError):
        proxy.openai("sk-wrong").responses.create(model="gpt-4o", input="hi")
    hang = {"model": "gpt-4o", "input": "scenario:hang", "stream": True}
    with httpx.stream("POST", proxy.base_url + ROUTE, json=hang, headers={"x-api-key": ALICE_KEY}) as running:
        # alice's one slot is taken while this streams; its first text delta (after response.created and
        # in_progress, which the proxy sends before the model starts) is its time to first token.
        chunks = running.iter_raw()  # kept open: alice's stream goes on
        received = next(chunks)
        while b"response.output_text.delta" not in received:
            received += next(chunks)
        assert proxy.metric("stackctl_proxy_ttft_seconds_count", route=ROUTE) == 1
        with pytest.raises(openai.RateLimitError) as caught:
            proxy.openai().responses.create(model="gpt-4o", input="hi")
        assert (caught.value.body["type"], caught.value.body["code"]) == ("rate_limit_error", "rate_limit_exceeded")  # type: ignore[index]
        bobs = list(proxy.openai(BOB_KEY).responses.create(model="gpt-4o", input="hi", stream=True))
        assert bobs[-1].response.output_text == DEFAULT_TEXT  # type: ignore[attr-defined]
    assert eventually(lambda: proxy.metric("stackctl_proxy_in_flight", route=ROUTE) == 0)
    assert proxy.metric("stackctl_proxy_requests_total", key="alice", route=ROUTE, status="429") == 1
    assert proxy.metric("stackctl_proxy_requests_total", key="bob", route=ROUTE, status="200") == 1
    assert proxy.metric("stackctl_proxy_requests_total", key="unauthenticated", route=ROUTE, status="401") == 1
    assert proxy.metric("stackctl_proxy_tokens_total", direction="out", key="bob") == 7  # the reply's usage
    # bob's stream adds one; the refused and the unauthenticated requests none.
    assert proxy.metric("stackctl_proxy_ttft_seconds_count", route=ROUTE) == 2


def test_a_client_that_leaves_cancels_the_backend_request(proxy: RunningProxy, backend: ScriptedBackend) -> None:
    before = backend.disconnects.count("responses-hang")
    body = {"model": "gpt-4o", "input": "scenario:hang", "stream": True}
    with httpx.stream("POST", proxy.base_url + ROUTE, json=body, headers={"x-api-key": ALICE_KEY}) as response:
        assert response.status_code == 200
        next(response.iter_raw())  # the stream is flowing; now the client walks away
    assert eventually(lambda: backend.disconnects.count("responses-hang") > before), "backend kept generating"


def test_a_backend_that_dies_mid_reply_ends_the_stream_with_response_failed(proxy: RunningProxy) -> None:
    body = {"model": "gpt-4o", "input": "scenario:died_midway", "stream": True}
    response = httpx.post(proxy.base_url + ROUTE, json=body, headers={"x-api-key": ALICE_KEY})
    events = sse_events(response.content)
    assert [e["type"] for e in events[-2:]] == ["error", "response.failed"], events
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    failed = events[-1]["response"]
    assert failed["status"] == "failed" and failed["id"] == events[0]["response"]["id"]
    assert failed["error"]["code"] == "server_error" and "stopped mid-reply" in failed["error"]["message"]
    # The SDK reads both as events (Codex retries a failed response).
    kinds = [e.type for e in proxy.openai().responses.create(**body)]  # type: ignore[call-overload]
    assert kinds[-2:] == ["error", "response.failed"]


def test_vllms_own_error_event_is_followed_by_response_failed_with_its_message(proxy: RunningProxy) -> None:
    body = {"model": "gpt-4o", "input": "scenario:generation_error", "stream": True}
    events = sse_events(httpx.post(proxy.base_url + ROUTE, json=body, headers={"x-api-key": ALICE_KEY}).content)
    kinds = [e["type"] for e in events]
    assert kinds[-2:] == ["error", "response.failed"] and kinds.count("error") == 1, kinds  # vLLM's, not a second
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert events[-1]["response"]["error"]["message"] == "the model backend failed mid-reply: engine core died"


def test_max_output_tokens_is_fitted_and_a_prompt_over_the_window_is_context_length_exceeded(
    start_proxy, base_settings, backend: ScriptedBackend
) -> None:  # type: ignore[no-untyped-def]
    proxy = start_proxy(base_settings)  # its own window and ratio
    key = uuid.uuid4().hex[:10]
    backend.script(key, [Turn(text="fits")])
    reply = proxy.openai().responses.create(model="gpt-4o", input=f"script:{key}", max_output_tokens=10**6)
    assert reply.output_text == "fits"
    assert backend.script_requests(key)[0]["max_output_tokens"] == backend.window
    with pytest.raises(openai.BadRequestError) as caught:
        proxy.openai().responses.create(model="gpt-4o", input="word " * (backend.window * 2))
    assert caught.value.code == "context_length_exceeded"
    assert f"maximum context length is {backend.window} tokens" in caught.value.message


def test_bad_requests_get_openai_errors(proxy: RunningProxy) -> None:
    headers = {"x-api-key": ALICE_KEY}
    missing = httpx.post(proxy.base_url + ROUTE, json={"model": "gpt-4o"}, headers=headers)
    assert missing.status_code == 400 and missing.json()["error"]["param"] == "input"
    tools = httpx.post(proxy.base_url + ROUTE, json={"model": "gpt-4o", "input": "x", "tools": [{"type": 3}]},
                       headers=headers)  # fmt: skip
    assert tools.status_code == 400 and tools.json()["error"]["type"] == "invalid_request_error"
    unknown = httpx.post(proxy.base_url + ROUTE, json={"model": "nope", "input": "x"}, headers=headers)
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "model_not_found"


def test_a_conversation_s_backend_requests_extend_each_other(proxy: RunningProxy, backend: ScriptedBackend) -> None:
    """Codex re-sends the whole conversation each turn: after the proxy's fixes, each backend
    request must still start with the previous one, item for item (vLLM's prefix cache)."""
    key = uuid.uuid4().hex[:10]
    backend.script(key, [Turn(reasoning="Spawn one.", tool_calls=(("multi_agent_v1__spawn_agent", {"message": "go"}),)),
                         Turn(tool_calls=(("exec_command", {"cmd": "ls"}),)), Turn(text="All done.")])  # fmt: skip
    conversation: list[dict] = [
        {"type": "reasoning", "id": "rs_old", "summary": [], "encrypted_content": "gAAAA-opaque"},
        user(f"script:{key} work"),
    ]
    client = proxy.openai()
    for _ in range(3):
        reply = client.responses.create(model="gpt-4o", input=conversation, tools=[SHELL, AGENTS], stream=False)  # type: ignore[arg-type, list-item]
        for item in reply.output:  # the client keeps what came back, and answers the calls
            conversation.append(item.model_dump(exclude_none=True))
            if item.type == "function_call":
                conversation.append({"type": "function_call_output", "call_id": item.call_id, "output": "ok"})
    assert reply.output_text == "All done."
    requests = backend.script_requests(key)
    assert len(requests) == 3
    for earlier, later in pairwise(requests):
        assert later["tools"] == earlier["tools"]
        assert json.dumps(later["input"][: len(earlier["input"])]) == json.dumps(earlier["input"])
