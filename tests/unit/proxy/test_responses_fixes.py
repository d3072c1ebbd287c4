"""The Responses API request fixes, as pure functions: namespaced tools flattened and restored,
encrypted reasoning dropped; each deterministic, so a conversation renders the same each turn."""

from __future__ import annotations

import json

from stackctl.proxy.protocol.responses import ResponsesRequest
from stackctl.proxy.responses.reasoning_replay import drop_encrypted_reasoning
from stackctl.proxy.responses.tool_names import flatten_namespaces

NAMESPACE = {
    "type": "namespace",
    "name": "mcp__docs",
    "tools": [
        {"type": "function", "name": "search", "parameters": {"type": "object", "properties": {"q": {}}}},
        {"type": "custom", "name": "apply", "format": {"type": "text"}},
    ],
}
# A plain function whose own name holds the separator: never taken for a namespaced one.
DUNDER = {"type": "function", "name": "read__file", "parameters": {}}


def request(**fields: object) -> ResponsesRequest:
    return ResponsesRequest.model_validate({"model": "m", "input": "hi", **fields})


def sent(parsed: ResponsesRequest) -> dict:
    return json.loads(parsed.to_json())


def test_members_are_flat_functions_other_members_and_fields_untouched() -> None:
    parsed = request(tools=[DUNDER, NAMESPACE], temperature=0.3, client_metadata={"a": "b"})
    changed, names = flatten_namespaces(parsed)
    body = sent(parsed)
    assert changed and body["tools"] == [
        DUNDER,
        {"type": "function", "name": "mcp__docs__search", "parameters": {"type": "object", "properties": {"q": {}}}},
        {"type": "custom", "name": "apply", "format": {"type": "text"}},
    ]
    assert body["temperature"] == 0.3 and body["client_metadata"] == {"a": "b"}
    assert names.members == {"mcp__docs__search": ("mcp__docs", "search")}


def test_restoring_touches_only_the_namespaced_calls() -> None:
    _, names = flatten_namespaces(request(tools=[DUNDER, NAMESPACE]))
    done = {
        "type": "response.completed",
        "response": {"output": [
            {"type": "function_call", "name": "mcp__docs__search", "arguments": "{}"},
            {"type": "function_call", "name": "read__file", "arguments": "{}"},
            {"type": "message", "name": "mcp__docs__search"},
        ]},
    }  # fmt: skip
    assert names.restore_document(done)
    calls = done["response"]["output"]
    assert (calls[0]["namespace"], calls[0]["name"]) == ("mcp__docs", "search")
    assert "namespace" not in calls[1] and calls[1]["name"] == "read__file"
    assert calls[2] == {"type": "message", "name": "mcp__docs__search"}
    assert not names.restore_document({"type": "response.output_text.delta", "delta": "mcp__docs__search"})


def test_nothing_to_fix_changes_nothing() -> None:
    parsed = request(tools=[DUNDER], input=[{"role": "user", "content": "hi"}])
    assert flatten_namespaces(parsed)[0] is False and drop_encrypted_reasoning(parsed) is False


def test_the_same_conversation_is_fixed_the_same_way_every_turn() -> None:
    conversation = [
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "opaque"},
        {"type": "reasoning", "id": "rs_2", "summary": [{"type": "summary_text", "text": "s"}], "encrypted_content": "o"},
        {"type": "function_call", "call_id": "c", "name": "search", "namespace": "mcp__docs", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c", "output": "found"},
    ]  # fmt: skip
    bodies = []
    for turn in range(2):
        parsed = request(tools=[NAMESPACE], input=conversation[: 2 + 2 * turn])
        flatten_namespaces(parsed)
        drop_encrypted_reasoning(parsed)
        bodies.append(sent(parsed)["input"])
    assert bodies[1][: len(bodies[0])] == bodies[0]
    assert bodies[1] == [
        {"type": "reasoning", "id": "rs_2", "summary": [{"type": "summary_text", "text": "s"}]},
        {"type": "function_call", "call_id": "c", "name": "mcp__docs__search", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c", "output": "found"},
    ]
