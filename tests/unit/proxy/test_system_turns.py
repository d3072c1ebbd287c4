"""System text placement: a request that extends the previous one converts to a backend
request that extends the previous one (vLLM's prefix cache), whatever system text appears."""

from __future__ import annotations

from itertools import pairwise

from stackctl.proxy.anthropic.to_openai import translate_messages_request
from stackctl.proxy.protocol.anthropic import MessagesRequest

BILLING = {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.330.94e; cc_entrypoint=cli;"}
SYSTEM = [BILLING, {"type": "text", "text": "You are Claude Code."}]


def backend_messages(messages: list[dict], placement: str = "in-place") -> list[dict]:
    request = MessagesRequest.model_validate(
        {"model": "m", "max_tokens": 10, "system": SYSTEM, "messages": messages}
    )
    chat = translate_messages_request(request, "served", placement)  # type: ignore[arg-type]
    return chat.model_dump(exclude_none=True)["messages"]


def text_of(message: dict) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "".join(part["text"] for part in content)


# Claude Code 2.1.330, as captured: the environment block after the first prompt, a session
# resumed the next day, then one more turn.
TURN_1 = [
    {"role": "user", "content": [{"type": "text", "text": "<system-reminder>\nattribution\n</system-reminder>\n"},
                                 {"type": "text", "text": "turn 1 say hi"}]},
    {"role": "system", "content": [{"type": "text", "text": "# Environment\nToday's date is 2026-11-23."}]},
]
TURN_2 = [
    *TURN_1,
    {"role": "assistant", "content": [{"type": "text", "text": "hi there"}]},
    {"role": "user", "content": "turn 2 say hi"},
    {"role": "system", "content": [{"type": "text", "text": "The date has changed. Today's date is now 2026-11-24."}]},
]
TURN_3 = [*TURN_2, {"role": "assistant", "content": "hi again"}, {"role": "user", "content": "turn 3"}]


def test_billing_header_never_reaches_the_model() -> None:
    leading = backend_messages(TURN_1)[0]
    assert leading == {"role": "system", "content": "You are Claude Code."}


def test_inline_system_text_stays_where_it_stood_as_a_reminder() -> None:
    out = backend_messages(TURN_2)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user"]
    first_user = out[1]["content"]
    assert first_user[-1]["text"] == "\n\n<system-reminder>\n# Environment\nToday's date is 2026-11-23.\n</system-reminder>"
    assert out[3]["content"] == (
        "turn 2 say hi\n\n<system-reminder>\nThe date has changed. Today's date is now 2026-11-24.\n</system-reminder>"
    )


def test_each_turn_extends_the_previous_backend_request() -> None:
    turns = [backend_messages(turn) for turn in (TURN_1, TURN_2, TURN_3)]
    for earlier, later in pairwise(turns):
        # Every message but the last is unchanged; the last may only have grown at its end.
        assert later[: len(earlier) - 1] == earlier[:-1]
        last, grown = earlier[-1], later[len(earlier) - 1]
        assert grown["role"] == last["role"] and text_of(grown).startswith(text_of(last))


def test_front_placement_rewrites_the_front_when_a_system_message_appears() -> None:
    before, after = backend_messages(TURN_1, "front"), backend_messages(TURN_2, "front")
    assert before[0]["content"] != after[0]["content"]
    assert after[0]["content"].startswith("x-anthropic-billing-header")  # the old conversion, kept whole


def test_system_text_after_an_assistant_turn_is_a_user_turn_of_its_own() -> None:
    out = backend_messages([
        {"role": "user", "content": "u1"},
        {"role": "assistant", "content": "a1"},
        {"role": "system", "content": "ToolSearch is no longer available."},
        {"role": "user", "content": "u2"},
    ])
    assert out[3] == {"role": "user", "content": "<system-reminder>\nToolSearch is no longer available.\n</system-reminder>"}
    assert out[4] == {"role": "user", "content": "u2"}


def test_system_text_before_the_conversation_joins_the_leading_system_message() -> None:
    out = backend_messages([{"role": "system", "content": "rules"}, {"role": "user", "content": "u1"}])
    assert out[0] == {"role": "system", "content": "You are Claude Code.\n\nrules"}


def test_an_empty_system_message_adds_nothing() -> None:
    # Claude Code's per-turn effort statement: {"role": "system", "content": [], "output_config": ...}
    out = backend_messages([{"role": "user", "content": "u1"}, {"role": "system", "content": [],
                                                                 "output_config": {"effort": "low"}}])
    assert out[1] == {"role": "user", "content": "u1"}
