"""Web search, the parts without a server: result mapping, limits, history, settings."""

from __future__ import annotations

import json

import msgspec
import pytest
from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

from stackctl.proxy.anthropic.stream_translator import AnthropicStreamTranslator
from stackctl.proxy.anthropic.to_openai import translate_messages_request
from stackctl.proxy.anthropic.web_search.ddgs_search import DdgsSearch, map_ddgs_results
from stackctl.proxy.anthropic.web_search.search_backend import SearchError, SearchResult
from stackctl.proxy.anthropic.web_search.searxng_search import map_searxng_results
from stackctl.proxy.anthropic.web_search.tool import (
    DEFAULT_MAX_USES,
    WebSearchSpec,
    backend_query,
    decode_snippet,
    domain_allowed,
    find_web_search_tool,
    result_blocks,
    tool_result_text,
)
from stackctl.proxy.errors import InvalidRequest
from stackctl.proxy.protocol.anthropic import MessagesRequest, Tool, WebSearchToolResultBlock
from stackctl.proxy.protocol.openai_stream import ChatCompletionChunk
from stackctl.proxy.settings import ProxyConfigError, build_settings

# ---- ddgs ----------------------------------------------------------------------------------


def test_ddgs_text_results_map_to_search_results() -> None:
    items = [
        {"title": "Python 3.14", "href": "https://python.org/3.14", "body": "What's new."},
        {"title": "News", "url": "https://n.example/a", "body": "b", "date": "2025-10-07"},
        {"title": "No link", "href": "", "body": "dropped"},
        {"href": "https://untitled.example/", "body": None},
    ]
    assert map_ddgs_results(items) == [
        SearchResult("https://python.org/3.14", "Python 3.14", "What's new.", None),
        SearchResult("https://n.example/a", "News", "b", "2025-10-07"),
        SearchResult("https://untitled.example/", "https://untitled.example/", "", None),
    ]


async def test_ddgs_adapter_runs_the_search_function_with_the_limit() -> None:
    calls = []

    def text_search(query: str, max_results: int) -> list[dict]:
        calls.append((query, max_results))
        return [{"title": "T", "href": "https://t.example/", "body": "s"}]

    results = await DdgsSearch(timeout_s=1, text_search=text_search).search("q", max_results=5)
    assert calls == [("q", 5)]
    assert results == [SearchResult("https://t.example/", "T", "s")]


@pytest.mark.parametrize(
    ("raised", "reason"),
    [
        (RatelimitException("202 Ratelimit"), "rate_limited"),
        (TimeoutException("timed out"), "timeout"),
        (DDGSException("ConnectError"), "unavailable"),
    ],
)
async def test_ddgs_errors_become_search_errors(raised: Exception, reason: str) -> None:
    def text_search(query: str, max_results: int) -> list[dict]:
        raise raised

    with pytest.raises(SearchError) as caught:
        await DdgsSearch(timeout_s=1, text_search=text_search).search("q", max_results=5)
    assert caught.value.reason == reason


async def test_ddgs_no_results_is_an_empty_list() -> None:
    def text_search(query: str, max_results: int) -> list[dict]:
        raise DDGSException("No results found.")

    assert await DdgsSearch(timeout_s=1, text_search=text_search).search("q", max_results=5) == []


def test_searxng_results_map_to_search_results() -> None:
    payload = {
        "results": [
            {"url": "https://a.example/", "title": "A", "content": "c", "publishedDate": "2024"},
            {"url": "", "title": "dropped"},
            {"url": "https://b.example/", "title": "B", "publishedDate": None},
        ]
    }
    assert map_searxng_results(payload) == [
        SearchResult("https://a.example/", "A", "c", "2024"),
        SearchResult("https://b.example/", "B", "", None),
    ]
    with pytest.raises(SearchError):
        map_searxng_results({"error": "x"})


# ---- the tool ------------------------------------------------------------------------------


def tools(*items: dict) -> list[Tool]:
    return [Tool.model_validate(item) for item in items]


@pytest.mark.parametrize("version", ["web_search_20250305", "web_search_20260209"])
def test_any_web_search_version_is_found(version: str) -> None:
    spec = find_web_search_tool(tools({"type": version, "name": "web_search"}))
    assert spec == WebSearchSpec(name="web_search", max_uses=DEFAULT_MAX_USES)


def test_tool_limits_are_read() -> None:
    spec = find_web_search_tool(
        tools(
            {
                "type": "web_search_20250305",
                "name": "web_search",
                "max_uses": 3,
                "allowed_domains": ["https://www.Docs.Python.org/3/", "pypi.org"],
            }
        )
    )
    assert spec == WebSearchSpec("web_search", 3, ("docs.python.org", "pypi.org"))


def test_no_search_tool_or_a_client_tool_of_that_name() -> None:
    assert find_web_search_tool(None) is None
    assert find_web_search_tool(tools({"name": "f", "input_schema": {}})) is None
    clash = tools(
        {"type": "web_search_20250305", "name": "web_search"},
        {"name": "web_search", "input_schema": {"type": "object"}},
    )
    assert find_web_search_tool(clash) is None


@pytest.mark.parametrize(
    "options",
    [{"allowed_domains": ["a.com"], "blocked_domains": ["b.com"]}, {"max_uses": 0}],
)
def test_invalid_tool_options_are_refused(options: dict) -> None:
    with pytest.raises(InvalidRequest, match=r"tools\.0"):
        find_web_search_tool(
            tools({"type": "web_search_20250305", "name": "web_search", **options})
        )


def test_domains_match_subdomains() -> None:
    allowed = WebSearchSpec("web_search", 5, allowed_domains=("python.org",))
    assert domain_allowed("https://docs.python.org/3/", allowed)
    assert domain_allowed("https://python.org/", allowed)
    assert not domain_allowed("https://notpython.org/", allowed)
    assert not domain_allowed("not a url", allowed)
    blocked = WebSearchSpec("web_search", 5, blocked_domains=("spam.com",))
    assert not domain_allowed("https://x.spam.com/a", blocked)
    assert domain_allowed("https://spam.community/", blocked)
    assert backend_query("q", allowed) == "q site:python.org"
    assert backend_query("q", blocked) == "q"


# ---- results for the client and the model -------------------------------------------------


def test_results_carry_their_snippet_for_the_model() -> None:
    blocks = result_blocks([SearchResult("https://a.example/", "A", "snippet é", "2025-01-02")])
    assert decode_snippet(blocks[0].encrypted_content) == "snippet é"
    assert decode_snippet("EqgfCioIARgBIiQ3") is None  # Anthropic's own: opaque
    block = WebSearchToolResultBlock(
        type="web_search_tool_result", tool_use_id="srvtoolu_1", content=blocks
    )
    assert tool_result_text(block) == (
        "Web search results:\n\n[1] A\nURL: https://a.example/\nPublished: 2025-01-02\nsnippet é"
    )


def test_history_splits_around_each_search() -> None:
    found = result_blocks([SearchResult("https://a.example/", "A", "s")])
    request = MessagesRequest.model_validate(
        {
            "model": "m",
            "max_tokens": 5,
            "messages": [
                {"role": "user", "content": "q"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "Searching."},
                        {"type": "server_tool_use", "id": "s1", "name": "web_search",
                         "input": {"query": "a"}},
                        {"type": "server_tool_use", "id": "s2", "name": "web_search",
                         "input": {"query": "b"}},
                        {"type": "web_search_tool_result", "tool_use_id": "s1",
                         "content": [b.model_dump() for b in found]},
                        {"type": "web_search_tool_result", "tool_use_id": "s2",
                         "content": {"type": "web_search_tool_result_error",
                                     "error_code": "unavailable"}},
                        {"type": "server_tool_use", "id": "orphan", "name": "web_search",
                         "input": {"query": "c"}},
                        {"type": "text", "text": "Writing."},
                        {"type": "tool_use", "id": "t1", "name": "Write", "input": {"x": 1}},
                    ],
                },
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
            ],
        }
    )  # fmt: skip
    messages = translate_messages_request(request, "m").model_dump(exclude_none=True)["messages"]
    assert [(m["role"], m.get("tool_call_id")) for m in messages] == [
        ("user", None),
        ("assistant", None),
        ("tool", "s1"),
        ("tool", "s2"),
        ("assistant", None),
        ("tool", "t1"),
    ]
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["s1", "s2"]
    assert json.loads(messages[1]["tool_calls"][0]["function"]["arguments"]) == {"query": "a"}
    assert messages[3]["content"].startswith("Web search failed (unavailable)")
    # The unanswered call is left out; the client's own tool call follows the searches.
    assert messages[4]["content"] == "Writing."
    assert [c["id"] for c in messages[4]["tool_calls"]] == ["t1"]


# ---- the stream translator across turns -----------------------------------------------------


def chunk(**delta: object) -> ChatCompletionChunk:
    return msgspec.convert(
        {"id": "chatcmpl-1", "model": "m", "choices": [{"index": 0, "delta": delta}]},
        ChatCompletionChunk,
    )


def events(data: bytes) -> list[tuple[str, dict]]:
    found = []
    for block in data.decode().split("\n\n"):
        if block.strip():
            lines = dict(line.split(": ", 1) for line in block.split("\n"))
            found.append((lines["event"], json.loads(lines["data"])))
    return found


def test_translator_spans_turns_with_server_tool_blocks() -> None:
    translator = AnthropicStreamTranslator(
        model="m",
        stop_sequences=None,
        server_tools=frozenset({"web_search"}),
        server_tool_id=lambda: "srvtoolu_x",
    )
    call = {"index": 0, "id": "call-1", "function": {"name": "web_search", "arguments": ""}}
    out = translator.feed(chunk(content="Looking."))
    out += translator.feed(chunk(tool_calls=[call]))
    out += translator.feed(
        chunk(tool_calls=[{"index": 0, "function": {"arguments": '{"query": "q"}'}}])
    )
    out += translator.finish()
    assert translator.turn_ended and not translator.finished
    record = translator.turn_record()
    assert record.text == "Looking." and not record.called_client_tools
    assert [(c.id, c.input) for c in record.server_calls] == [("srvtoolu_x", {"query": "q"})]
    out += translator.add_block(
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_x", "content": []}
    )
    translator.web_search_requests = 1
    translator.next_turn()
    out += translator.feed(chunk(content="Answer."))
    out += translator.finish()
    assert translator.turn_record().server_calls == []
    out += translator.finish_message()

    seen = events(out)
    names = [name for name, _ in seen]
    assert names.count("message_start") == 1 and names.count("message_stop") == 1
    starts = [data for name, data in seen if name == "content_block_start"]
    assert [(s["index"], s["content_block"]["type"]) for s in starts] == [
        (0, "text"),
        (1, "server_tool_use"),
        (2, "web_search_tool_result"),
        (3, "text"),
    ]
    delta = next(data for name, data in seen if name == "message_delta")
    assert delta["delta"]["stop_reason"] == "end_turn"
    assert delta["usage"]["server_tool_use"] == {"web_search_requests": 1}


# ---- settings ------------------------------------------------------------------------------


def settings_for(**kwargs: object):  # type: ignore[no-untyped-def]
    return build_settings(backend_url="http://127.0.0.1:8000", no_auth=True, **kwargs)  # type: ignore[arg-type]


def test_search_settings_default_to_ddgs() -> None:
    settings = settings_for(env={})
    assert (settings.search_backend, settings.searxng_url, settings.search_timeout_s) == (
        "ddgs",
        None,
        10.0,
    )


def test_search_settings_from_the_environment() -> None:
    env = {
        "STACKCTL_PROXY_SEARCH_BACKEND": "searxng",
        "STACKCTL_PROXY_SEARXNG_URL": "http://127.0.0.1:8888",
        "STACKCTL_PROXY_SEARCH_TIMEOUT_SECONDS": "2.5",
    }
    settings = settings_for(env=env)
    assert (settings.search_backend, settings.searxng_url, settings.search_timeout_s) == (
        "searxng",
        "http://127.0.0.1:8888",
        2.5,
    )
    assert settings_for(env=env, search_backend="off").search_backend == "off"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"search_backend": "google"}, "is not one of ddgs, searxng, off"),
        ({"search_backend": "searxng"}, "needs --searxng-url"),
        ({"search_backend": "searxng", "searxng_url": "localhost:8888"}, "not an http"),
    ],
)
def test_bad_search_settings_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(ProxyConfigError, match=message):
        settings_for(env={}, **kwargs)
