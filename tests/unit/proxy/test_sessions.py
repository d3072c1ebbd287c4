"""Per-session prefix tracking (proxy/sessions/): where a request leaves the one before, what
stands there, the LRU, the report's wording, and the capture's files."""

from __future__ import annotations

from collections import deque
from dataclasses import fields, is_dataclass

import pytest

from stackctl.proxy.metrics import ProxyMetrics
from stackctl.proxy.protocol.openai import (
    ChatMessage,
    ChatRequest,
    FunctionDefinition,
    TextPart,
    ToolDefinition,
)
from stackctl.proxy.sessions.fingerprint import BLOCK, compare, fingerprint
from stackctl.proxy.sessions.parts import (
    chat_payload_parts,
    chat_request_parts,
    first_user_text_of_items,
    responses_payload_parts,
)
from stackctl.proxy.sessions.service import LocalSessions
from stackctl.proxy.sessions.tracker import Observation, SessionTracker, client_session
from stackctl.proxy.sessions.volatile import suspect_at

SYSTEM = "You are a coding agent. Follow the user's instructions carefully and keep answers short. " * 3


def tool(name: str) -> dict:
    return {"type": "function", "function": {"name": name, "description": f"{name} a file",
                                             "parameters": {"type": "object", "properties": {}}}}


def chat(*turns: str, system: str = SYSTEM, tools: tuple[str, ...] = ("read", "write")) -> dict:
    """An OpenAI chat request: the system prompt, then user/assistant turns alternating."""
    messages = [{"role": "system", "content": system}]
    messages += [{"role": "user" if i % 2 == 0 else "assistant", "content": text} for i, text in enumerate(turns)]
    return {"model": "m", "messages": messages, "tools": [tool(name) for name in tools]}


def strings_in(value: object) -> list[str]:
    """Every text an object holds, through dataclasses, slots and containers."""
    if isinstance(value, str | bytes):
        return [value if isinstance(value, str) else value.decode("latin-1")]
    if isinstance(value, list | tuple | deque):
        return [text for item in value for text in strings_in(item)]
    names = [f.name for f in fields(value)] if is_dataclass(value) else getattr(type(value), "__slots__", ())
    return [text for name in names for text in strings_in(getattr(value, name))]


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def observe(tracker: SessionTracker, payload: dict, *, key: str = "alice", header: str | None = None):  # type: ignore[no-untyped-def]
    messages = payload["messages"]
    return tracker.observe(Observation(key, header, first_user_text_of_items(messages), "/v1/chat/completions",
                                       chat_payload_parts(payload)))


def test_a_conversation_that_grows_keeps_its_prefix() -> None:
    tracker = SessionTracker()
    first = observe(tracker, chat("fix the bug"))
    second = observe(tracker, chat("fix the bug", "done", "now add a test"))
    assert (first.outcome, second.outcome) == ("first", "kept")
    assert second.kept_messages == 2 and second.kept_bytes == second.previous_bytes == first.prompt_bytes
    assert second.change is None and second.messages == 4


def test_a_changed_system_prompt_is_found_in_its_block() -> None:
    tracker = SessionTracker()
    observe(tracker, chat("hi"))
    offset = 150
    changed = SYSTEM[:offset] + "X" + SYSTEM[offset + 1:]
    turn = observe(tracker, chat("hi", "hello", "more", system=changed))
    assert turn.outcome == "broken" and turn.kept_messages == 0
    assert turn.change is not None
    assert turn.change.label == "messages[0] (system).content"
    assert turn.change.offset == offset // BLOCK * BLOCK and turn.change.span == BLOCK
    assert turn.change.describe() == (f"messages[0] (system).content changed in bytes "
                                      f"{offset // BLOCK * BLOCK}-{offset // BLOCK * BLOCK + BLOCK - 1}")
    assert turn.kept_bytes == len(b"m") + offset // BLOCK * BLOCK  # the model name, then the system text


@pytest.mark.parametrize(("before", "after", "kind"), [
    ("2026-11-24T08:15:03Z", "2026-11-24T08:15:09Z", "a timestamp"),
    ("Today is 2026-11-24.", "Today is 2026-11-25.", "a date"),
    ("request 7d9c2f8e-1a2b-4c3d-9e8f-0a1b2c3d4e5f", "request 0c1d2e3f-4a5b-4c6d-8e9f-a0b1c2d3e4f5", "an id (UUID)"),
    ("at 1795484186 s", "at 1795484199 s", "a Unix timestamp"),
    ("it is 08:15:03 now", "it is 08:16:44 now", "a time of day"),
])
def test_a_volatile_token_is_named_at_its_first_byte(before: str, after: str, kind: str) -> None:
    tracker = SessionTracker()
    prefix = "You are helpful. " * 11  # the token sits past the first block, in the middle of one
    observe(tracker, chat("hi", system=prefix + before))
    turn = observe(tracker, chat("hi", system=prefix + after))
    start = len(prefix) + next(i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b)
    token = suspect_at((prefix + after).encode(), start // BLOCK * BLOCK, BLOCK)
    assert token is not None and token.kind == kind
    assert turn.change is not None and turn.change.reason == kind
    assert turn.change.describe() == f"messages[0] (system).content changed at byte {token.offset}: {kind}"
    assert len(prefix) <= token.offset <= start


def test_plain_text_changes_name_no_suspect() -> None:
    assert suspect_at(b"You are a helpful assistant that writes poems about cats.", 32, 32) is None


def test_tools_reordered_added_and_removed() -> None:
    def broken(tools: tuple[str, ...]) -> str:
        tracker = SessionTracker()
        observe(tracker, chat("hi", tools=("read", "write", "grep")))
        turn = observe(tracker, chat("hi", tools=tools))
        assert turn.outcome == "broken" and turn.change is not None
        return turn.change.describe()

    assert broken(("grep", "read", "write")).startswith("tools reordered (tools[0] differs in bytes")
    assert broken(("read", "write", "grep", "edit")).startswith("a tool added")
    assert broken(("read", "grep")).startswith("a tool removed")


def test_a_request_shorter_than_the_last_and_a_changed_role() -> None:
    tracker = SessionTracker()
    observe(tracker, chat("a", "b", "c"))
    cut = observe(tracker, chat("a"))
    assert cut.outcome == "broken" and cut.kept_messages == 2
    assert cut.change is not None and cut.change.describe() == (
        "the request ends where the previous one went on (at messages[2] (assistant).content)")
    tracker = SessionTracker()
    observe(tracker, chat("a", "b"))
    payload = chat("a", "b", "c")
    payload["messages"][2]["role"] = "user"
    turn = observe(tracker, payload)
    assert turn.change is not None and "role changed" in turn.change.describe()


def test_text_as_a_string_or_as_text_pieces_is_the_same_prompt() -> None:
    as_string = ChatRequest(model="m", messages=[ChatMessage(role="user", content="a\nb")])
    as_pieces = ChatRequest(model="m", messages=[ChatMessage(role="user", content=[TextPart(text="a"), TextPart(text="b")])])
    before = fingerprint(chat_request_parts(as_string))
    match, _ = compare(before, chat_request_parts(as_pieces))
    assert match.divergence is None


def test_the_chat_template_order_system_then_tools_then_the_conversation() -> None:
    request = ChatRequest(
        model="m",
        messages=[ChatMessage(role="system", content="s"), ChatMessage(role="user", content="u")],
        tools=[ToolDefinition(function=FunctionDefinition(name="t", parameters={}))],
    )
    labels = [part.label for part in chat_request_parts(request)]
    assert labels == ["model", "messages[0] (system).content", "tools[0]", "messages[1] (user).content"]
    payload = {"model": "m", "instructions": "be brief", "tools": [tool("t")],
               "input": [{"role": "developer", "content": "d"}, {"role": "user", "content": [{"type": "input_text", "text": "u"}]},
                         {"type": "function_call", "name": "t", "arguments": "{}", "call_id": "c1"}]}
    labels = [part.label for part in responses_payload_parts(payload)]
    assert labels == ["model", "instructions", "input[0] (developer).content", "tools[0]", "input[1] (user).content",
                      "input[2] (function_call).type+name+arguments+call_id"]


def test_sessions_are_told_apart_by_key_header_and_first_user_turn() -> None:
    tracker = SessionTracker()
    observe(tracker, chat("task one"), header="s1")
    # opencode's title request: the same session header, another first user turn.
    title = observe(tracker, chat("Generate a title for: task one"), header="s1")
    assert title.outcome == "first"
    assert observe(tracker, chat("task one"), key="bob", header="s1").outcome == "first"
    assert observe(tracker, chat("task one", "ok", "go on"), header="s1").outcome == "kept"
    assert len(tracker.sessions) == 3
    assert client_session({"x-claude-code-session-id": " abc "}) == "abc"
    assert client_session({"session-id": "codex"}) == "codex"
    assert client_session({"x-session-affinity": "ses_1"}) == "ses_1"
    assert client_session({}) is None


def counted(sessions: LocalSessions, payload: dict) -> None:
    """One request through the sessions as the proxy observes it (metrics counted)."""
    sessions.observe(Observation("alice", None, first_user_text_of_items(payload["messages"]), "/v1/chat/completions",
                                 chat_payload_parts(payload)))


def test_memory_is_an_lru_of_sessions_without_prompt_text() -> None:
    metrics = ProxyMetrics(key_names=("alice",))
    tracker = SessionTracker(capacity=3, turns_kept=2)
    sessions = LocalSessions(tracker, metrics)
    for number in range(5):
        counted(sessions, chat(f"conversation {number}"))
    assert len(tracker.sessions) == 3
    assert [s.turns[0].number for s in tracker.sessions.values()] == [1, 1, 1]
    for _ in range(4):
        counted(sessions, chat("conversation 4", "a", "b", system=SYSTEM * 20))
    session = next(reversed(tracker.sessions.values()))
    assert len(session.turns) == 2 and session.turns_total == 5
    # What is kept of a request is checksums: about an eighth of its bytes (4 per 32), no text.
    assert session.fingerprint.stored_bytes < session.turns[-1].prompt_bytes / 6
    assert not [text for text in strings_in(session) if "conversation" in text or "coding agent" in text]
    rendered = metrics.render().decode()
    assert 'stackctl_proxy_prefix_requests_total{key="alice",outcome="first"} 5.0' in rendered
    assert 'stackctl_proxy_prefix_requests_total{key="alice",outcome="kept"} 3.0' in rendered
    assert 'stackctl_proxy_prefix_requests_total{key="alice",outcome="broken"} 1.0' in rendered  # the new system
    assert 'stackctl_proxy_prefix_broken_sessions_total{key="alice"} 1.0' in rendered


def test_a_session_counts_as_broken_once_and_its_turns_take_the_usage() -> None:
    metrics = ProxyMetrics(key_names=("alice",))
    tracker = SessionTracker()
    sessions = LocalSessions(tracker, metrics)
    counted(sessions, chat("x", system="A" * 100))
    for letter in "BC":
        counted(sessions, chat("x", system=letter * 100))
    turn = next(iter(tracker.sessions.values())).turns[-1]
    turn.usage(1000, 900)
    turn.usage(10, 0)  # a search loop's second backend call
    assert (turn.prompt_tokens, turn.cached_tokens) == (1010, 900)
    assert 'stackctl_proxy_prefix_broken_sessions_total{key="alice"} 1.0' in metrics.render().decode()
    session = next(iter(tracker.sessions.values()))
    assert session.breaks == 2
