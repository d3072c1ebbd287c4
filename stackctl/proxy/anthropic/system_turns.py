"""Where system text goes in the OpenAI conversation, so that vLLM's prefix cache survives.

Claude Code re-sends 30k+ tokens every turn; only a backend request that extends the previous
one token for token reuses the cached prefix. Two things in Claude Code's requests break that
when handled naively:

- an `x-anthropic-billing-header: cc_version=...;` first system block whose value changes from
  session to session (Anthropic's accounting, never shown to a model): dropped;
- inline `role: "system"` messages (Claude Code 2.1.3xx sends its environment block after the
  first user message, and appends new ones later: "The date has changed...", "ToolSearch is no
  longer available..."). Qwen3 templates refuse a system message anywhere but first, so they
  used to be merged into the leading system message: every new one then rewrote the front and
  the whole prompt was prefilled again.

`in-place` (the default) keeps each inline system text where it stood, as a
`<system-reminder>` (the tag Claude Code itself uses in user turns): appended to the user
message it follows, or a user message of its own. Every chat template accepts user text, and
a new system message only changes the end of the conversation. `front` is the old merge into
the leading system message, for comparison (benchmarks/prefix_cache.py) and for a template
that would refuse the reminder.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from stackctl.proxy.protocol.anthropic import Message, TextBlock
from stackctl.proxy.protocol.openai import ChatMessage, TextPart

SystemPlacement = Literal["in-place", "front"]
SYSTEM_PLACEMENTS: tuple[SystemPlacement, ...] = ("in-place", "front")

_BILLING_HEADER = "x-anthropic-billing-header:"
SystemField = str | list[TextBlock] | None


def system_prompt_text(system: SystemField) -> str:
    """The top-level `system`, without Anthropic's billing header block."""
    if isinstance(system, str):
        return "" if system.startswith(_BILLING_HEADER) else system
    blocks = [block.text for block in system or [] if not block.text.startswith(_BILLING_HEADER)]
    return "\n\n".join(text for text in blocks if text)


def inline_system_text(message: Message) -> str:
    if isinstance(message.content, str):
        return message.content
    return "\n\n".join(
        block.text for block in message.content if isinstance(block, TextBlock) and block.text
    )


def reminder(text: str) -> str:
    return f"<system-reminder>\n{text}\n</system-reminder>"


Convert = Callable[[Message], list[ChatMessage]]


def conversation(
    system: SystemField,
    messages: Sequence[Message],
    convert: Convert,
    placement: SystemPlacement,
) -> list[ChatMessage]:
    """The OpenAI messages: `convert` turns a user or assistant message into OpenAI ones;
    system text is placed as `placement` says."""
    return _PLACEMENTS[placement](system, messages, convert)


def _kept_in_place(
    system: SystemField, messages: Sequence[Message], convert: Convert
) -> list[ChatMessage]:
    front = [system_prompt_text(system)]
    out: list[ChatMessage] = []
    for message in messages:
        if message.role != "system":
            out.extend(convert(message))
            continue
        text = inline_system_text(message)
        if not text:
            continue  # Claude Code's per-turn effort statements carry no text
        if not out:
            front.append(text)  # before the conversation: it stands at the front anyway
        elif out[-1].role == "user":
            out[-1] = _with_text_appended(out[-1], reminder(text))
        else:
            out.append(ChatMessage(role="user", content=reminder(text)))
    leading = "\n\n".join(part for part in front if part)
    return [ChatMessage(role="system", content=leading), *out] if leading else out


def _with_text_appended(message: ChatMessage, text: str) -> ChatMessage:
    # Templates concatenate content parts without a separator: the blank line is ours.
    content = message.content
    if content is None or content == "":
        return message.model_copy(update={"content": text})
    if isinstance(content, str):
        return message.model_copy(update={"content": f"{content}\n\n{text}"})
    return message.model_copy(update={"content": [*content, TextPart(text=f"\n\n{text}")]})


def _merged_in_front(
    system: SystemField, messages: Sequence[Message], convert: Convert
) -> list[ChatMessage]:
    parts = [system if isinstance(system, str) else "\n\n".join(b.text for b in system or [])]
    parts += [inline_system_text(message) for message in messages if message.role == "system"]
    leading = "\n\n".join(part for part in parts if part)
    out = [ChatMessage(role="system", content=leading)] if leading else []
    for message in messages:
        if message.role != "system":
            out.extend(convert(message))
    return out


_PLACEMENTS: dict[
    SystemPlacement, Callable[[SystemField, Sequence[Message], Convert], list[ChatMessage]]
] = {"in-place": _kept_in_place, "front": _merged_in_front}
