"""A coding agent's conversation as the filter-proxy gets it, turn by turn: the shape of Claude
Code's real requests (2.1.330, recorded on the demo stack: a 6.8 KB system prompt, 12 tools of
0.2-5.8 KB, 31 KB in all, a first user turn of reminders and its 9 KB environment as an inline
system message, then turns of ~0.2 and ~0.6 KB: 48 KB at turn 1) with
generated text, so what depends on a request's size and parts (the proxy's translation, its
session tracking) is measured on what agents send, without Node or Anthropic's prompt here.

Also: what the session tracking costs per request, in-process (`tracking_cost`).
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass

# (name, description bytes, properties) per tool, as Claude Code 2.1.330 sends them.
_TOOLS = [("Agent", 3225, 9), ("Bash", 2110, 8), ("Edit", 360, 4), ("ListAgents", 1433, 3), ("Read", 790, 5),
          ("ReportFindings", 574, 9), ("ScheduleWakeup", 3396, 7), ("Skill", 1417, 2), ("ToolSearch", 952, 3),
          ("Workflow", 3496, 10), ("DeferredToolPlaceholder", 83, 0), ("Write", 240, 2)]
_SYSTEM_BYTES = 6770
_WORDS = ("the", "file", "tool", "agent", "session", "prompt", "cache", "token", "model",
          "request", "reply", "user", "system", "output", "input", "error", "test", "build", "run",
          "path", "line", "code", "change", "commit", "branch", "review", "plan", "step", "result")


def _text(rng: random.Random, size: int) -> str:
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(_WORDS)
        words.append(word)
        length += len(word) + 1
    return " ".join(words)[:size]


def _tool(rng: random.Random, name: str, description: int, properties: int) -> dict:
    schema = {"type": "object", "properties": {
        f"{name.lower()}_{n}": {"type": "string", "description": _text(rng, 120)} for n in range(properties)
    }, "required": [f"{name.lower()}_0"] if properties else [], "additionalProperties": False}
    return {"name": name, "description": _text(rng, description), "input_schema": schema}


def agent_request(turn: int, *, conversation: str = "c1", model: str = "claude-bench", max_tokens: int = 32) -> bytes:
    """The /v1/messages body of turn `turn` (from 1) of one conversation: each turn repeats the
    one before and adds a reply and a user message, as Claude Code does."""
    rng = random.Random(f"agent-conversation:{conversation}")
    system = [{"type": "text", "text": "You are a coding agent."}, {"type": "text", "text": _text(rng, _SYSTEM_BYTES)}]
    tools = [_tool(rng, *spec) for spec in _TOOLS]
    messages: list[dict] = [{"role": "user", "content": [
        {"type": "text", "text": f"<system-reminder>\n{_text(rng, 600)}\n</system-reminder>"},
        {"type": "text", "text": f"{conversation} turn 1: {_text(rng, 30)}"},
    ]}, {"role": "system", "content": f"# Environment\n{_text(rng, 9100)}"}]
    for number in range(2, turn + 1):
        messages.append({"role": "assistant", "content": [{"type": "text", "text": _text(rng, 600)}]})
        messages.append({"role": "user", "content": f"turn {number}: {_text(rng, 160)}"})
    body = {"model": model, "max_tokens": max_tokens, "stream": True, "system": system, "tools": tools,
            "messages": messages}
    return json.dumps(body).encode()


@dataclass(frozen=True)
class TrackingCost:
    request_bytes: int
    first_us: float  # a session's first request: every part's blocks computed
    next_us: float  # a following turn: what repeats takes its blocks from the turn before
    session_bytes: int  # what the tracker keeps of the session (checksums)


def tracking_cost(turns: int = 20, rounds: int = 30) -> TrackingCost:
    """The tracking's own work per request (the parts of the translated request, the comparison,
    the checksums), measured in-process on this conversation; the proxy does it after the reply's
    first event is written."""
    from stackctl.proxy.anthropic.to_openai import translate_messages_request
    from stackctl.proxy.protocol.anthropic import MessagesRequest
    from stackctl.proxy.sessions.parts import chat_request_parts, first_user_text_of_messages
    from stackctl.proxy.sessions.tracker import Observation, SessionTracker

    requests = [MessagesRequest.model_validate_json(agent_request(n)) for n in range(1, turns + 1)]
    chats = [translate_messages_request(request, "bench-model", "in-place") for request in requests]
    first_user = first_user_text_of_messages(requests[0])

    def observe(tracker: SessionTracker, index: int) -> None:
        tracker.observe(Observation("bench", "s", first_user, "/v1/messages", chat_request_parts(chats[index])))

    first = following = 0.0
    tracker = SessionTracker()
    for _ in range(rounds):
        tracker = SessionTracker()
        started = time.perf_counter()
        observe(tracker, 0)
        first += time.perf_counter() - started
        started = time.perf_counter()
        for index in range(1, turns):
            observe(tracker, index)
        following += time.perf_counter() - started
    session = next(iter(tracker.sessions.values()))
    return TrackingCost(
        request_bytes=len(agent_request(turns)),
        first_us=first / rounds * 1e6,
        next_us=following / rounds / (turns - 1) * 1e6,
        session_bytes=session.fingerprint.stored_bytes,
    )


if __name__ == "__main__":
    cost = tracking_cost()
    print(f"session tracking, in-process, a Claude Code-shaped conversation ({cost.request_bytes / 1024:.0f} KB "
          f"at turn 20): {cost.first_us:.0f} us a session's first request, {cost.next_us:.0f} us each next turn; "
          f"{cost.session_bytes / 1024:.1f} KB kept per session")
