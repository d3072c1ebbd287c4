"""The scripted backend's `/v1/responses`: replies streamed as vLLM 0.32's Responses endpoint
streams them (its non-harmony path: `event:` lines, sequence numbers from 0, reasoning ->
text -> function calls, each as an output item; the SDK's own event types, dumped as vLLM
dumps them).

A request whose user input mentions `script:KEY` gets the next scripted Turn; otherwise the
last user input picks a scenario: `scenario:hang` streams text until the client leaves,
`scenario:died_midway` stops after the first text delta without `response.completed`,
`scenario:generation_error` sends vLLM's own `error` event there and ends, and anything else is
answered with DEFAULT_TEXT.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from typing import Any

from openai.types.responses import (
    ResponseContentPartAddedEvent,
    ResponseContentPartDoneEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionCallArgumentsDoneEvent,
    ResponseFunctionToolCall,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
    ResponseReasoningTextDeltaEvent,
    ResponseReasoningTextDoneEvent,
    ResponseTextDeltaEvent,
    ResponseTextDoneEvent,
)
from openai.types.responses.response_reasoning_item import Content as ReasoningText
from pydantic import BaseModel

DEFAULT_TEXT = "Hello from the scripted backend."
_SCRIPT = re.compile(r"script:(\w+)")
_SCENARIO = re.compile(r"scenario:(\w+)")


def user_text(payload: dict[str, Any]) -> str:
    """Every user input's text, joined (where `script:KEY` and `scenario:NAME` are read)."""
    items = payload.get("input")
    if isinstance(items, str):
        return items
    texts = []
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                texts.append(content)
            elif isinstance(content, list):
                # Only text parts count: the backend keeps every request of a session, hostile
                # ones too (a part's text may be any value there).
                texts += [part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str)]
    return "\n".join(texts)


def script_key(payload: dict[str, Any]) -> str | None:
    found = _SCRIPT.search(user_text(payload))
    return found.group(1) if found else None


def scenario(payload: dict[str, Any]) -> str:
    items = payload.get("input")
    last = items if isinstance(items, str) else user_text({"input": (items or [])[-1:]})
    found = _SCENARIO.search(last)
    return found.group(1) if found else "text"


class ResponsesTurn:
    """One reply: its output items as vLLM streams them, and the response object around them."""

    def __init__(
        self,
        payload: dict[str, Any],
        *,
        text: str,
        tool_calls: tuple[tuple[str, dict[str, Any]], ...],
        reasoning: str,
        prompt_tokens: int,
        completion_tokens: int,
    ) -> None:
        self.payload = payload
        self.text = text
        self.tool_calls = tool_calls
        self.reasoning = reasoning
        self.usage = {
            "input_tokens": prompt_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": completion_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt_tokens + completion_tokens,
        }
        self.id = f"resp_{uuid.uuid4().hex[:16]}"
        self._sequence = 0

    def response(self, status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": self.id,
            "created_at": 1763848800,
            "model": self.payload.get("model"),
            "object": "response",
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": self.payload.get("tool_choice", "auto"),
            "tools": self.payload.get("tools", []),
            "status": status,
            "usage": self.usage if status == "completed" else None,
        }

    def whole(self) -> dict[str, Any]:
        """The unstreamed reply."""
        items = [events[-1].item.model_dump(mode="json") for events in self._items()]  # type: ignore[attr-defined]
        return self.response("completed", items)

    def events(self) -> list[bytes]:
        """Every event of the streamed reply, in order."""
        out = [self._event("response.created", {"response": self.response("in_progress", [])})]
        out.append(self._event("response.in_progress", {"response": self.response("in_progress", [])}))
        done_items = []
        for events in self._items():
            for event in events:
                event.sequence_number = self._sequence
                out.append(self._raw(event))
            done_items.append(events[-1].item.model_dump(mode="json"))  # type: ignore[attr-defined]
        out.append(self._event("response.completed", {"response": self.response("completed", done_items)}))
        return out

    def _items(self) -> list[list[BaseModel]]:
        items = []
        index = 0
        if self.reasoning:
            items.append(self._reasoning(index))
            index += 1
        if self.text:
            items.append(self._message(index))
            index += 1
        for name, arguments in self.tool_calls:
            items.append(self._call(index, name, json.dumps(arguments)))
            index += 1
        return items

    def _reasoning(self, index: int) -> list[BaseModel]:
        item_id = f"rs_{uuid.uuid4().hex[:16]}"
        part = ReasoningText(text=self.reasoning, type="reasoning_text")
        common = {"item_id": item_id, "output_index": index, "content_index": 0, "sequence_number": 0}
        return [
            ResponseOutputItemAddedEvent(
                type="response.output_item.added", output_index=index, sequence_number=0,
                item=ResponseReasoningItem(type="reasoning", id=item_id, summary=[], status="in_progress"),
            ),
            ResponseContentPartAddedEvent.model_construct(
                type="response.content_part.added", part={"text": "", "type": "reasoning_text"}, **common
            ),
            *(
                ResponseReasoningTextDeltaEvent(type="response.reasoning_text.delta", delta=word, **common)
                for word in _words(self.reasoning)
            ),
            ResponseReasoningTextDoneEvent(type="response.reasoning_text.done", text=self.reasoning, **common),
            ResponseContentPartDoneEvent.model_construct(
                type="response.content_part.done", part=part.model_dump(), **common
            ),
            ResponseOutputItemDoneEvent(
                type="response.output_item.done", output_index=index, sequence_number=0,
                item=ResponseReasoningItem(
                    type="reasoning", id=item_id, summary=[], content=[part], status="completed"
                ),
            ),
        ]  # fmt: skip

    def _message(self, index: int) -> list[BaseModel]:
        item_id = f"msg_{uuid.uuid4().hex[:16]}"
        common = {"item_id": item_id, "output_index": index, "content_index": 0, "sequence_number": 0}
        text = ResponseOutputText(type="output_text", text=self.text, annotations=[], logprobs=None)

        def message(status: str, content: list[ResponseOutputText]) -> ResponseOutputMessage:
            return ResponseOutputMessage(
                type="message", id=item_id, role="assistant", status=status, content=content  # type: ignore[arg-type]
            )

        return [
            ResponseOutputItemAddedEvent(
                type="response.output_item.added", output_index=index, sequence_number=0,
                item=message("in_progress", []),
            ),
            ResponseContentPartAddedEvent(
                type="response.content_part.added",
                part=ResponseOutputText(type="output_text", text="", annotations=[], logprobs=[]), **common
            ),
            *(
                ResponseTextDeltaEvent(type="response.output_text.delta", delta=word, logprobs=[], **common)
                for word in _words(self.text)
            ),
            ResponseTextDoneEvent(type="response.output_text.done", text=self.text, logprobs=[], **common),
            ResponseContentPartDoneEvent(type="response.content_part.done", part=text, **common),
            ResponseOutputItemDoneEvent(
                type="response.output_item.done", output_index=index, sequence_number=0,
                item=message("completed", [text]),
            ),
        ]  # fmt: skip

    def _call(self, index: int, name: str, arguments: str) -> list[BaseModel]:
        item_id, call_id = f"fc_{uuid.uuid4().hex[:16]}", f"chatcmpl-tool-{uuid.uuid4().hex[:16]}"
        common = {"item_id": item_id, "output_index": index, "sequence_number": 0}

        def call(status: str, text: str) -> ResponseFunctionToolCall:
            return ResponseFunctionToolCall(
                type="function_call", id=item_id, call_id=call_id, name=name, arguments=text, status=status  # type: ignore[arg-type]
            )

        middle = len(arguments) // 2
        return [
            ResponseOutputItemAddedEvent(
                type="response.output_item.added", output_index=index, sequence_number=0,
                item=call("in_progress", ""),
            ),
            *(
                ResponseFunctionCallArgumentsDeltaEvent(
                    type="response.function_call_arguments.delta", delta=piece, **common
                )
                for piece in (arguments[:middle], arguments[middle:])
            ),
            ResponseFunctionCallArgumentsDoneEvent(
                type="response.function_call_arguments.done", arguments=arguments, name=name, **common
            ),
            ResponseOutputItemDoneEvent(
                type="response.output_item.done", output_index=index, sequence_number=0,
                item=call("completed", arguments),
            ),
        ]  # fmt: skip

    def _event(self, kind: str, fields: dict[str, Any]) -> bytes:
        body = {**fields, "sequence_number": self._sequence, "type": kind}
        self._sequence += 1
        return f"event: {kind}\ndata: {json.dumps(body)}\n\n".encode()

    def _raw(self, event: BaseModel) -> bytes:
        self._sequence += 1
        kind = event.type  # type: ignore[attr-defined]
        return f"event: {kind}\ndata: {event.model_dump_json(by_alias=True)}\n\n".encode()


def _words(text: str) -> list[str]:
    words = text.split(" ")
    return [word if i == 0 else " " + word for i, word in enumerate(words)]


async def stream_events(send: Any, events: list[bytes], *, pace_s: float = 0.0) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"text/event-stream; charset=utf-8")],
        }
    )
    for event in events:
        await send({"type": "http.response.body", "body": event, "more_body": True})
        if pace_s:
            await asyncio.sleep(pace_s)


def generation_error(sequence_number: int) -> bytes:
    """The `error` event vLLM streams when generation fails after the stream started."""
    body = {"type": "error", "code": "InternalServerError", "message": "engine core died",
            "param": None, "sequence_number": sequence_number}  # fmt: skip
    return f"event: error\ndata: {json.dumps(body)}\n\n".encode()
