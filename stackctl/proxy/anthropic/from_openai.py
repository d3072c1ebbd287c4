"""OpenAI chat completion -> Anthropic message (pure functions, no I/O).

Shared with the stream translator: stop-reason mapping, ids and tool-input parsing, so the
streamed and the plain reply of the same completion come out identical.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from stackctl.proxy.errors import BackendError
from stackctl.proxy.protocol.anthropic import (
    MessageReply,
    ReplyText,
    ReplyThinking,
    ReplyToolUse,
    ReplyUsage,
    StopReason,
)
from stackctl.proxy.protocol.openai import ChatCompletion, Usage


def message_id(backend_id: str) -> str:
    suffix = backend_id.removeprefix("chatcmpl-") if backend_id else secrets.token_hex(12)
    return f"msg_{suffix}"


def tool_use_id(backend_id: str | None) -> str:
    # Kept verbatim when present: the client sends it back as tool_use_id -> tool_call_id.
    return backend_id or f"toolu_{secrets.token_hex(12)}"


def parse_tool_input(arguments: str) -> dict[str, Any]:
    """Arguments are a JSON object as text; anything else is kept visible rather than lost."""
    if not arguments.strip():
        return {}
    try:
        value = json.loads(arguments)
    except ValueError:
        return {"_unparsed_arguments": arguments}
    return value if isinstance(value, dict) else {"_unparsed_arguments": arguments}


def map_stop_reason(
    finish_reason: str | None,
    backend_stop_reason: str | int | None,
    stop_sequences: list[str] | None,
    *,
    called_tools: bool,
) -> tuple[StopReason, str | None]:
    """finish_reason -> (stop_reason, stop_sequence).

    vLLM reports the matched stop string in the non-standard `stop_reason` field; a named or
    required tool choice finishes with "stop", so tool calls decide `tool_use` themselves.
    """
    if finish_reason == "length":
        return "max_tokens", None
    if called_tools or finish_reason == "tool_calls":
        return "tool_use", None
    if (
        isinstance(backend_stop_reason, str)
        and stop_sequences
        and backend_stop_reason in stop_sequences
    ):
        return "stop_sequence", backend_stop_reason
    return "end_turn", None


def translate_completion(
    reply: ChatCompletion, *, stop_sequences: list[str] | None
) -> MessageReply:
    if not reply.choices:
        raise BackendError("backend reply has no choices", backend_status=502)
    choice = reply.choices[0]
    message = choice.message
    content: list[ReplyThinking | ReplyText | ReplyToolUse] = []
    if message.thinking:
        content.append(ReplyThinking(thinking=message.thinking))
    if message.content:
        content.append(ReplyText(text=message.content))
    for call in message.tool_calls or []:
        content.append(
            ReplyToolUse(
                id=tool_use_id(call.id),
                name=call.function.name or "",
                input=parse_tool_input(call.function.arguments or ""),
            )
        )
    stop_reason, stop_sequence = map_stop_reason(
        choice.finish_reason,
        choice.stop_reason,
        stop_sequences,
        called_tools=bool(message.tool_calls),
    )
    return MessageReply(
        id=message_id(reply.id),
        model=reply.model,
        content=content,
        stop_reason=stop_reason,
        stop_sequence=stop_sequence,
        usage=anthropic_usage(reply.usage),
    )


def anthropic_usage(usage: Usage | None) -> ReplyUsage:
    """OpenAI usage -> Anthropic's: the cached prompt tokens are cache reads, the rest input."""
    if usage is None:
        return ReplyUsage(input_tokens=0, output_tokens=0)
    cached = min(usage.cached_tokens, usage.prompt_tokens)
    return ReplyUsage(
        input_tokens=usage.prompt_tokens - cached,
        cache_read_input_tokens=cached,
        output_tokens=usage.completion_tokens,
    )
