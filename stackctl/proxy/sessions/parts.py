"""A backend request as the parts of its prompt, in the order chat templates render them: the
model, the leading system (or developer) messages, the tools, then the conversation.

Texts are their UTF-8 bytes (a byte offset is one into the text the model reads); anything else
(tool calls, a tool's definition, an image) is compact JSON. Labels say where a part sits in the
request the backend got: `messages[0] (system).content`, `tools[3]`, `input[2] (user).content[0]`.

Also here: the text of the client's first user turn, which (with the key and a client's session
header) tells one conversation from another.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic_core import to_json

from stackctl.proxy.protocol.anthropic import MessagesRequest
from stackctl.proxy.protocol.openai import ChatMessage, ChatRequest, TextPart
from stackctl.proxy.sessions.fingerprint import Part

_LEADING_ROLES = ("system", "developer")
# A message's text pieces are one text to the model: vLLM joins them with a newline, so
# `"content": "a"` and `[{"type": "text", "text": "a"}]` render alike.
_JOIN = "\n"


def chat_request_parts(chat: ChatRequest) -> list[Part]:
    """The chat request the proxy built (Anthropic clients' requests, translated)."""
    messages = chat.messages
    lead = _leading(message.role for message in messages)
    parts = [Part("model", -1, _text(chat.model))]
    for index in range(lead):
        parts.extend(_chat_message_parts(index, messages[index]))
    for index, tool in enumerate(chat.tools or ()):
        parts.append(Part(f"tools[{index}]", -1, to_json(tool, exclude_none=True)))
    for index in range(lead, len(messages)):
        parts.extend(_chat_message_parts(index, messages[index]))
    return parts


def _chat_message_parts(index: int, message: ChatMessage) -> list[Part]:
    base = f"messages[{index}] ({message.role})"
    parts: list[Part] = []
    content = message.content
    if isinstance(content, str):
        parts.append(Part(f"{base}.content", index, _text(content)))
    elif content is not None:
        texts = [piece.text for piece in content if isinstance(piece, TextPart)]
        if texts:
            parts.append(Part(f"{base}.content", index, _text(_JOIN.join(texts))))
        for number, piece in enumerate(content):
            if not isinstance(piece, TextPart):
                parts.append(Part(f"{base}.content[{number}]", index, _text(piece.image_url.url)))
    if message.tool_calls:
        calls = [[call.id, call.function.name, call.function.arguments] for call in message.tool_calls]
        parts.append(Part(f"{base}.tool_calls", index, _json(calls)))
    if message.tool_call_id is not None:
        parts.append(Part(f"{base}.tool_call_id", index, _text(message.tool_call_id)))
    return parts or [Part(base, index, b"")]


def chat_payload_parts(payload: dict[str, Any]) -> list[Part]:
    """An OpenAI chat request as a client sent it (the pass-through routes)."""
    messages = payload.get("messages")
    return _payload_parts(payload, "messages", messages if isinstance(messages, list) else [], [])


def responses_payload_parts(payload: dict[str, Any]) -> list[Part]:
    """A Responses API request (`instructions`, `tools`, `input`), as the backend gets it."""
    items = payload.get("input")
    items = items if isinstance(items, list) else [{"role": "user", "content": items}] if items else []
    instructions = payload.get("instructions")
    head = [Part("instructions", -1, _text(instructions))] if isinstance(instructions, str) else []
    return _payload_parts(payload, "input", items, head)


def _payload_parts(payload: dict[str, Any], field: str, items: list[Any], head: list[Part]) -> list[Part]:
    """The model, `head`, the leading system items, the tools, then the other items."""
    lead = _leading(_role(item) for item in items)
    parts = [Part("model", -1, _text(str(payload.get("model", "")))), *head]
    for index in range(lead):
        parts.extend(_item_parts(field, index, items[index]))
    parts.extend(_tool_parts(payload.get("tools")))
    for index in range(lead, len(items)):
        parts.extend(_item_parts(field, index, items[index]))
    return parts


def _item_parts(field: str, index: int, item: Any) -> list[Part]:
    """A chat message or a Responses input item: its content piece by piece, the rest as JSON."""
    if not isinstance(item, dict):
        return [Part(f"{field}[{index}]", index, _json(item))]
    role = _role(item)
    base = f"{field}[{index}] ({role or item.get('type') or '?'})"
    parts: list[Part] = []
    content = item.get("content")
    if isinstance(content, str):
        parts.append(Part(f"{base}.content", index, _text(content)))
    elif isinstance(content, list):
        texts = [text for piece in content if isinstance(text := _piece_text(piece), str)]
        if texts:
            parts.append(Part(f"{base}.content", index, _text(_JOIN.join(texts))))
        for number, piece in enumerate(content):
            if not isinstance(_piece_text(piece), str):
                parts.append(Part(f"{base}.content[{number}]", index, _json(piece)))
    elif content is not None:
        parts.append(Part(f"{base}.content", index, _json(content)))
    rest = {key: value for key, value in item.items() if key not in ("role", "content")}
    if rest:
        parts.append(Part(f"{base}.{'+'.join(rest)}", index, _json(rest)))
    return parts or [Part(base, index, b"")]


def _piece_text(piece: Any) -> str | None:
    text = piece.get("text") if isinstance(piece, dict) else None
    return text if isinstance(text, str) else None


def _tool_parts(tools: Any) -> Iterable[Part]:
    for index, tool in enumerate(tools if isinstance(tools, list) else ()):
        yield Part(f"tools[{index}]", -1, _json(tool))


def _leading(roles: Iterable[str | None]) -> int:
    count = 0
    for role in roles:
        if role not in _LEADING_ROLES:
            break
        count += 1
    return count


def _role(item: Any) -> str | None:
    role = item.get("role") if isinstance(item, dict) else None
    return role if isinstance(role, str) else None


def _text(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")


# ---- the first user turn -------------------------------------------------------------------------


def first_user_text_of_messages(request: MessagesRequest) -> str:
    """The first user message of an Anthropic request, its text blocks joined."""
    for message in request.messages:
        if message.role == "user":
            content = message.content
            if isinstance(content, str):
                return content
            return "\n".join(getattr(block, "text", None) or block.type for block in content)
    return ""


def first_user_text_of_items(items: Any) -> str:
    """The first user message (or item) of an OpenAI chat or Responses request."""
    if isinstance(items, str):
        return items
    for item in items if isinstance(items, list) else ():
        if _role(item) == "user":
            return _plain(item.get("content"))
    return ""


def _plain(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "\n".join(
            piece["text"] if isinstance(piece, dict) and isinstance(piece.get("text"), str) else json.dumps(piece)
            for piece in content
        )
    return json.dumps(content)
