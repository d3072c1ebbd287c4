"""Web search for Anthropic clients: the proxy runs the web_search server tool itself.

Real pieces on loopback: the official anthropic SDK as the client, the proxy, the scripted
backend (its scripts decide when the "model" calls web_search) and a SearXNG stand-in with
fixed results; the proxy is configured as `--search-backend searxng --searxng-url` would.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from dataclasses import replace

import httpx
import pytest

from tests.support.processes import free_port
from tests.support.proxy.fake_searxng import SEARCH_TIMEOUT_S
from tests.support.proxy.running import ALICE_KEY, RunningProxy
from tests.support.proxy.scripted_backend import SERVED_MODEL, ScriptedBackend, Turn
from tests.support.proxy.servers import raw_sse_events, wait_until_healthy

pytestmark = pytest.mark.integration

CLAUDE = "claude-haiku-4-5-20251001"
SEARCH_TOOL = {"type": "web_search_20250305", "name": "web_search", "max_uses": 5}
WRITE_TOOL = {
    "name": "Write",
    "description": "Write a file.",
    "input_schema": {
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["file_path", "content"],
    },
}


def scripted(backend: ScriptedBackend, turns: list[Turn]) -> tuple[str, str]:
    key = uuid.uuid4().hex[:12]
    return key, backend.script(key, turns)


def ask(marker: str, question: str = "What is new in 2.4?", **extra: object) -> dict:
    request: dict[str, object] = {
        "model": CLAUDE,
        "max_tokens": 512,
        "messages": [{"role": "user", "content": f"{question} {marker}"}],
        "tools": [SEARCH_TOOL],
    }
    request.update(extra)
    return request


def search_then_answer(query: str = "release 2.4 notes") -> list[Turn]:
    return [
        Turn(text="Let me search.", tool_calls=(("web_search", {"query": query}),)),
        Turn(text="Version 2.4 adds streaming web search [1]."),
    ]


def searches_metric(proxy: RunningProxy, outcome: str) -> float:
    text = httpx.get(proxy.base_url + "/metrics", timeout=5).text
    match = re.search(
        rf'^stackctl_proxy_web_searches_total\{{outcome="{outcome}"\}} (\S+)$', text, re.MULTILINE
    )
    assert match, f"no web search series for outcome {outcome}"
    return float(match.group(1))


def final_message(client, request: dict, *, streamed: bool):  # type: ignore[no-untyped-def]
    """The reply as the SDK's plain call gives it, or accumulated from its stream."""
    if not streamed:
        return client.messages.create(**request)
    with client.messages.stream(**request) as stream:
        return stream.get_final_message()


def block_types(message) -> list[str]:  # type: ignore[no-untyped-def]
    return [block.type for block in message.content]


@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "streamed"])
def test_search_blocks_and_final_text(
    search_proxy: RunningProxy, backend: ScriptedBackend, searxng, streamed: bool
) -> None:
    key, marker = scripted(backend, search_then_answer())
    client = search_proxy.anthropic()
    message = final_message(client, ask(marker), streamed=streamed)

    assert block_types(message) == ["text", "server_tool_use", "web_search_tool_result", "text"]
    intro, call, result, answer = message.content
    assert intro.text == "Let me search."
    assert call.name == "web_search" and call.input == {"query": "release 2.4 notes"}
    assert call.id.startswith("srvtoolu_")
    assert result.tool_use_id == call.id
    assert [(r.url, r.title, r.page_age) for r in result.content] == [
        ("https://docs.example.org/releases/2.4", "Release notes 2.4", "2025-11-20T00:00:00"),
        ("https://blog.example.com/posts/why-2-4", "Why we built 2.4", None),
        ("https://spam.invalid/page", "Spam", None),
    ]
    assert all(r.encrypted_content for r in result.content)
    assert answer.text == "Version 2.4 adds streaming web search [1]."
    assert message.stop_reason == "end_turn"
    assert message.usage.server_tool_use.web_search_requests == 1
    assert "release 2.4 notes" in searxng[0].queries

    first, second = backend.script_requests(key)
    # The model is offered a plain function in place of the server tool.
    offered = [tool["function"]["name"] for tool in first["tools"]]
    assert offered == ["web_search"] and first["tool_choice"] == "auto"
    assert first["stream"] is streamed and second["stream"] is streamed
    # The second request carries the call and its result as a `tool` message.
    assistant, tool = second["messages"][-2:]
    assert assistant["role"] == "assistant" and assistant["content"] == "Let me search."
    assert assistant["tool_calls"] == [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": "web_search", "arguments": '{"query": "release 2.4 notes"}'},
        }
    ]
    assert tool["role"] == "tool" and tool["tool_call_id"] == call.id
    assert "URL: https://docs.example.org/releases/2.4" in tool["content"]
    assert "Version 2.4 adds streaming web search." in tool["content"]  # the snippet
    # Tokens of both turns are summed.
    prompt_tokens = sum(len(json.dumps(r["messages"])) // 4 for r in (first, second))
    assert (message.usage.input_tokens, message.usage.output_tokens) == (prompt_tokens, 14)


def test_stream_is_one_message_with_pings_during_a_search(
    search_proxy: RunningProxy, backend: ScriptedBackend
) -> None:
    # "slow" waits past the 1 s timeout: the client sees pings meanwhile, then the error result.
    _, marker = scripted(backend, search_then_answer("slow release notes"))
    started = time.monotonic()
    events = raw_events(search_proxy, ask(marker))
    assert time.monotonic() - started < SEARCH_TIMEOUT_S + 3

    names = [name for name, _ in events]
    assert names.count("message_start") == 1 and names.count("message_stop") == 1
    assert names[-2:] == ["message_delta", "message_stop"]
    starts = [data for name, data in events if name == "content_block_start"]
    assert [s["index"] for s in starts] == [0, 1, 2, 3]
    assert [s["content_block"]["type"] for s in starts] == [
        "text",
        "server_tool_use",
        "web_search_tool_result",
        "text",
    ]
    assert starts[2]["content_block"]["content"] == {
        "type": "web_search_tool_result_error",
        "error_code": "unavailable",
    }
    call_stop = names.index("content_block_stop", names.index("content_block_start", 2))
    result_start = [i for i, n in enumerate(names) if n == "content_block_start"][2]
    assert names[call_stop + 1 : result_start].count("ping") >= 3  # the search took ~1 s
    delta = next(data for name, data in events if name == "message_delta")
    assert delta["delta"]["stop_reason"] == "end_turn"
    assert delta["usage"]["server_tool_use"] == {"web_search_requests": 1}


@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "streamed"])
def test_max_uses_is_enforced(
    search_proxy: RunningProxy, backend: ScriptedBackend, searxng, streamed: bool
) -> None:
    tag = uuid.uuid4().hex[:8]
    turns = [
        Turn(tool_calls=(("web_search", {"query": f"first {tag}"}),)),
        Turn(tool_calls=(("web_search", {"query": f"second {tag}"}),)),
        Turn(tool_calls=(("web_search", {"query": f"third {tag}"}),)),
        Turn(text="Here is what I found."),
    ]
    key, marker = scripted(backend, turns)
    before = searches_metric(search_proxy, "max_uses")
    request = ask(marker, tools=[{**SEARCH_TOOL, "max_uses": 2}])
    client = search_proxy.anthropic()
    message = final_message(client, request, streamed=streamed)

    assert block_types(message) == ["server_tool_use", "web_search_tool_result"] * 3 + ["text"]
    results = [block.content for block in message.content if block.type == "web_search_tool_result"]
    assert [type(r).__name__ for r in results[:2]] == ["list", "list"]
    assert results[2].error_code == "max_uses_exceeded"
    assert message.content[-1].text == "Here is what I found."
    assert message.stop_reason == "end_turn"
    assert message.usage.server_tool_use.web_search_requests == 2
    assert [q for q in searxng[0].queries if tag in q] == [f"first {tag}", f"second {tag}"]
    assert len(backend.script_requests(key)) == 4
    assert searches_metric(search_proxy, "max_uses") == before + 1


def test_a_model_that_never_stops_searching_pauses_the_turn(
    search_proxy: RunningProxy, backend: ScriptedBackend
) -> None:
    # The last scripted turn repeats: the model calls web_search forever.
    key, marker = scripted(backend, [Turn(tool_calls=(("web_search", {"query": "again"}),))])
    message = search_proxy.anthropic().messages.create(
        **ask(marker, tools=[{**SEARCH_TOOL, "max_uses": 1}])
    )
    assert message.stop_reason == "pause_turn"
    assert len(backend.script_requests(key)) == 3  # max_uses + 2 turns, then it stops
    assert message.usage.server_tool_use.web_search_requests == 1


@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "streamed"])
def test_a_client_tool_call_ends_the_turn(
    search_proxy: RunningProxy, backend: ScriptedBackend, streamed: bool
) -> None:
    write = {"file_path": "NOTES.md", "content": "2.4 adds web search"}
    turns = [
        Turn(tool_calls=(("web_search", {"query": "release 2.4"}),)),
        Turn(text="Writing the notes.", tool_calls=(("Write", write),)),
        Turn(text="never reached"),
    ]
    key, marker = scripted(backend, turns)
    request = ask(marker, tools=[WRITE_TOOL, SEARCH_TOOL])
    client = search_proxy.anthropic()
    message = final_message(client, request, streamed=streamed)

    assert block_types(message) == [
        "server_tool_use",
        "web_search_tool_result",
        "text",
        "tool_use",
    ]
    tool_use = message.content[-1]
    assert (tool_use.name, tool_use.input) == ("Write", write)
    assert message.stop_reason == "tool_use"
    requests = backend.script_requests(key)
    assert len(requests) == 2
    assert [tool["function"]["name"] for tool in requests[0]["tools"]] == ["Write", "web_search"]


def test_search_and_client_tool_in_one_turn(
    search_proxy: RunningProxy, backend: ScriptedBackend
) -> None:
    write = {"file_path": "a.txt", "content": "x"}
    turn = Turn(tool_calls=(("web_search", {"query": "release 2.4"}), ("Write", write)))
    key, marker = scripted(backend, [turn, Turn(text="never reached")])
    with search_proxy.anthropic().messages.stream(
        **ask(marker, tools=[WRITE_TOOL, SEARCH_TOOL])
    ) as stream:
        message = stream.get_final_message()
    # The search runs (as Anthropic's servers do), then the turn ends for the client's tool.
    assert block_types(message) == ["server_tool_use", "tool_use", "web_search_tool_result"]
    assert message.stop_reason == "tool_use"
    assert len(backend.script_requests(key)) == 1


FAILURES = [
    ("ratelimited", "too_many_requests", "rate_limited"),
    ("broken", "unavailable", "error"),
    ("slow", "unavailable", "timeout"),
]


@pytest.mark.parametrize(("query", "error_code", "outcome"), FAILURES)
@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "streamed"])
def test_failing_search_still_gets_an_answer(
    search_proxy: RunningProxy,
    backend: ScriptedBackend,
    query: str,
    error_code: str,
    outcome: str,
    streamed: bool,
) -> None:
    key, marker = scripted(
        backend,
        [
            Turn(tool_calls=(("web_search", {"query": f"{query} 2.4"}),)),
            Turn(text="The search failed; from memory: 2.4 added search."),
        ],
    )
    before = searches_metric(search_proxy, outcome)
    client = search_proxy.anthropic()
    started = time.monotonic()
    message = final_message(client, ask(marker), streamed=streamed)
    assert time.monotonic() - started < SEARCH_TIMEOUT_S + 3

    assert block_types(message) == ["server_tool_use", "web_search_tool_result", "text"]
    assert message.content[1].content.error_code == error_code
    assert message.content[2].text.startswith("The search failed")
    assert message.stop_reason == "end_turn"
    assert searches_metric(search_proxy, outcome) == before + 1
    tool_message = backend.script_requests(key)[1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert tool_message["content"].startswith(f"Web search failed ({error_code})")


def test_no_results_and_domain_filters(
    search_proxy: RunningProxy, backend: ScriptedBackend
) -> None:
    key, marker = scripted(
        backend,
        [
            Turn(
                tool_calls=(
                    ("web_search", {"query": "nothing at all"}),
                    ("web_search", {"query": "release 2.4"}),
                )
            ),
            Turn(text="Done."),
        ],
    )
    before = searches_metric(search_proxy, "empty")
    tool = {**SEARCH_TOOL, "blocked_domains": ["spam.invalid", "blog.example.com"]}
    message = search_proxy.anthropic().messages.create(**ask(marker, tools=[tool]))

    empty, found = [b.content for b in message.content if b.type == "web_search_tool_result"]
    assert empty == []
    assert [r.url for r in found] == ["https://docs.example.org/releases/2.4"]
    assert searches_metric(search_proxy, "empty") == before + 1
    assert message.usage.server_tool_use.web_search_requests == 2
    messages = backend.script_requests(key)[1]["messages"]
    assert [m["role"] for m in messages[-3:]] == ["assistant", "tool", "tool"]
    assert messages[-2]["content"] == "The web search found no results."


def test_history_with_earlier_searches_is_translated(
    search_proxy: RunningProxy, backend: ScriptedBackend
) -> None:
    key, marker = scripted(backend, search_then_answer())
    client = search_proxy.anthropic()
    first = client.messages.create(**ask(marker))
    call = first.content[1]
    # Claude Code sends the whole reply back with the next user message.
    follow_up = {
        "model": CLAUDE,
        "max_tokens": 64,
        "tools": [SEARCH_TOOL],
        "messages": [
            {"role": "user", "content": f"What is new in 2.4? {marker}"},
            {"role": "assistant", "content": [b.model_dump() for b in first.content]},
            {"role": "user", "content": "Thanks! And in 2.5?"},
        ],
    }
    backend.script(key, [Turn(text="2.5 is not out yet.")])
    second = client.messages.create(**follow_up)
    assert block_types(second) == ["text"]

    sent = backend.script_requests(key)[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "assistant", "user"]
    assert sent[1]["tool_calls"][0]["id"] == call.id
    assert sent[2]["tool_call_id"] == call.id
    # Exactly the text the model read in the live turn: the backend's prefix cache still hits.
    live = backend.script_requests(key)[1]["messages"]
    assert sent[2] == live[-1]
    assert sent[3] == {"role": "assistant", "content": "Version 2.4 adds streaming web search [1]."}


def test_history_from_anthropic_itself_keeps_titles_and_urls(
    proxy: RunningProxy, backend: ScriptedBackend
) -> None:
    # A conversation started on api.anthropic.com: its encrypted_content is not ours to read.
    proxy.anthropic().messages.create(
        model=CLAUDE,
        max_tokens=64,
        messages=[
            {"role": "user", "content": "news?"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "server_tool_use",
                        "id": "srvtoolu_01A",
                        "name": "web_search",
                        "input": {"query": "news"},
                    },
                    {
                        "type": "web_search_tool_result",
                        "tool_use_id": "srvtoolu_01A",
                        "content": [
                            {
                                "type": "web_search_result",
                                "url": "https://a.example/x",
                                "title": "A",
                                "encrypted_content": "EqgfCioIARgBIiQ3",
                                "page_age": "April 30, 2025",
                            }
                        ],
                    },
                    {"type": "text", "text": "Here is the news."},
                ],
            },
            {"role": "user", "content": "scenario:text"},
        ],
    )
    sent = backend.last("/v1/chat/completions").body["messages"]
    assert sent[2] == {
        "role": "tool",
        "tool_call_id": "srvtoolu_01A",
        "content": "Web search results:\n\n[1] A\nURL: https://a.example/x\nPublished: April 30, 2025",
    }


def test_search_off_behaves_as_without_the_tool(
    start_proxy, base_settings, backend: ScriptedBackend
) -> None:  # type: ignore[no-untyped-def]
    proxy = start_proxy(replace(base_settings, search_backend="off"))
    request = {
        "model": CLAUDE,
        "max_tokens": 256,
        "messages": [{"role": "user", "content": "scenario:one_tool_call"}],
    }
    plain = proxy.anthropic().messages.create(**request, tools=[WRITE_TOOL])
    with_search = proxy.anthropic().messages.create(**request, tools=[WRITE_TOOL, SEARCH_TOOL])
    assert with_search.model_dump() == plain.model_dump()
    sent = backend.last("/v1/chat/completions").body
    assert [tool["function"]["name"] for tool in sent["tools"]] == ["Write"]


def test_count_tokens_counts_the_search_function(
    search_proxy: RunningProxy, backend: ScriptedBackend
) -> None:
    search_proxy.anthropic().messages.count_tokens(
        model=CLAUDE, messages=[{"role": "user", "content": "hi"}], tools=[SEARCH_TOOL]
    )
    sent = backend.last("/tokenize").body
    assert [tool["function"]["name"] for tool in sent["tools"]] == ["web_search"]


def test_every_outcome_is_exported_before_the_first_search(start_proxy, base_settings) -> None:  # type: ignore[no-untyped-def]
    proxy = start_proxy(replace(base_settings, search_backend="off"))
    for outcome in ("ok", "empty", "error", "rate_limited", "timeout", "max_uses", "invalid_input"):
        assert searches_metric(proxy, outcome) == 0


def test_serve_command_with_searxng(scripted_backend, searxng, backend: ScriptedBackend) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    env = {**os.environ, "STACKCTL_PROXY_KEYS": f"alice={ALICE_KEY}"}
    command = [
        sys.executable, "-m", "stackctl.proxy", "serve",
        "--backend", scripted_backend[1],
        "--port", str(port),
        "--alias", f"claude-*={SERVED_MODEL}",
        "--search-backend", "searxng",
        "--searxng-url", searxng[1],
    ]  # fmt: skip
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_healthy(base, process)
        _, marker = scripted(backend, search_then_answer())
        running = RunningProxy(base_url=base, settings=None)  # type: ignore[arg-type]
        message = running.anthropic().messages.create(**ask(marker))
        assert block_types(message) == ["text", "server_tool_use", "web_search_tool_result", "text"]
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_serve_refuses_searxng_without_url() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "stackctl.proxy", "serve", "--backend", "http://127.0.0.1:1",
         "--no-auth", "--search-backend", "searxng"],
        capture_output=True, text=True, timeout=30, check=False,
        env={**os.environ, "STACKCTL_PROXY_SEARXNG_URL": ""},
    )  # fmt: skip
    assert result.returncode == 2
    assert "--search-backend searxng needs --searxng-url" in result.stderr


def raw_events(proxy: RunningProxy, request: dict) -> list[tuple[str, dict]]:
    return raw_sse_events(proxy.base_url, ALICE_KEY, request)
