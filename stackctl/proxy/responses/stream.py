"""One streamed `/v1/responses` reply relayed as it comes.

vLLM's events pass through untouched (text and reasoning deltas are never parsed); only the
events that name a function call are rewritten when the request had namespaced tools
(tool_names.py), and the terminal event is read for its usage. The client's stream always
ends the way the Responses API allows: `response.completed` / `response.incomplete` from the
backend, or, when the backend dies mid-reply, an `error` event and `response.failed` (Codex
retries a failed response; the OpenAI SDK yields both events).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from pydantic_core import from_json, to_json

from stackctl.proxy.backend.client import BackendStream, StreamError
from stackctl.proxy.context import log
from stackctl.proxy.metrics import RequestTimer
from stackctl.proxy.protocol.responses import ErrorEvent, ResponseError, ResponseFailedEvent
from stackctl.proxy.protocol.sse import EventSplitter, encode_event, event_data
from stackctl.proxy.protocol.usage import responses_usage
from stackctl.proxy.responses.tool_names import NamespacedNames
from stackctl.proxy.streaming import Emit

_CREATED = b"response.created"
_PREAMBLE = {_CREATED, b"response.in_progress"}  # sent before the model starts: not TTFT
_TERMINAL = {b"response.completed", b"response.incomplete", b"response.failed"}
_NAMING_CALLS = {
    b"response.output_item.added",
    b"response.output_item.done",
    b"response.function_call_arguments.done",
    *_TERMINAL,
}


class ResponsesRelay:
    def __init__(
        self,
        upstream: BackendStream,
        *,
        names: NamespacedNames,
        model: str,
        backend_url: str,
        timer: RequestTimer,
    ) -> None:
        self.upstream = upstream
        self.names = names
        self.model = model
        self.backend_url = backend_url
        self.timer = timer
        self._created: dict[str, Any] | None = None  # the response as `response.created` had it
        self._sent = 0  # events relayed: the next event's sequence_number
        self._finished = False
        self._backend_error: str | None = None

    async def produce(self, emit: Emit) -> None:
        splitter = EventSplitter()
        read = self.upstream.read
        try:
            while data := await read():
                events = splitter.feed(data)
                if events:
                    await emit(b"".join(self._relayed(event) for event in events))
        except StreamError as error:
            if not self._finished:  # a partial event is dropped: the failure replaces it
                await emit(self._failure(f"({type(error).__name__})"))
            return
        except Exception:  # noqa: BLE001 (logged with its traceback)
            # A proxy bug must still end the stream with an event the client can read.
            log.exception("relaying the backend's Responses stream failed")
            if not self._finished:
                await emit(self._failure("(an internal error in the filter-proxy)"))
            return
        rest = splitter.rest()
        if rest.strip():
            await emit(self._relayed(rest + b"\n\n"))
        if not self._finished:
            await emit(self._failure("(it closed the stream before the response was complete)"))

    def _relayed(self, event: bytes) -> bytes:
        self._sent += 1
        kind = _kind(event)
        if kind not in _PREAMBLE:
            self.timer.first_event()
        if kind == _CREATED:
            self._created = _response_of(event)
        elif kind in _TERMINAL:
            self._finished = True
            self._count_usage(event)
        elif kind == b"error":
            self._backend_error = _error_message(event)
        if self.names and kind in _NAMING_CALLS:
            return self._with_names_restored(event)
        return event

    def _with_names_restored(self, event: bytes) -> bytes:
        data = event_data(event)
        try:
            document = from_json(data or b"")
        except ValueError:
            return event
        if not isinstance(document, dict) or not self.names.restore_document(document):
            return event
        return encode_event(str(document.get("type", "message")), document)

    def _count_usage(self, event: bytes) -> None:
        response = _response_of(event) or {}
        self.timer.count(responses_usage(response.get("usage")))

    def _failure(self, reason: str) -> bytes:
        """An `error` event and `response.failed`, numbered after what was relayed."""
        message = (
            f"the model backend at {self.backend_url} stopped mid-reply {reason}; the reply is "
            "incomplete: retry the request"
        )
        if self._backend_error:
            message = f"the model backend failed mid-reply: {self._backend_error}"
        error = ResponseError(code="server_error", message=message)
        response = dict(self._created or self._blank_response())
        response.update(status="failed", error=error.model_dump())
        out = b""
        if self._backend_error is None:
            announced = ErrorEvent(code=error.code, message=message, sequence_number=self._sent)
            out += encode_event("error", announced.model_dump())
            self._sent += 1
        failed = ResponseFailedEvent(sequence_number=self._sent, response=response)
        self._sent += 1
        self._finished = True
        return out + encode_event(failed.type, failed.model_dump())

    def _blank_response(self) -> dict[str, Any]:
        return {
            "id": f"resp_{uuid.uuid4().hex}",
            "object": "response",
            "created_at": int(time.time()),
            "model": self.model,
            "output": [],
        }


def _kind(event: bytes) -> bytes:
    """The event's type: from its `event:` line (vLLM writes it first), else from its data."""
    if event.startswith(b"event: "):
        end = event.find(b"\n")
        return event[7:end].rstrip(b"\r") if end > 0 else b""
    data = event_data(event)
    try:
        document = from_json(data) if data else None
    except ValueError:
        return b""
    kind = document.get("type") if isinstance(document, dict) else None
    return kind.encode() if isinstance(kind, str) else b""


def _response_of(event: bytes) -> dict[str, Any] | None:
    try:
        document = from_json(event_data(event) or b"")
    except ValueError:
        return None
    response = document.get("response") if isinstance(document, dict) else None
    return response if isinstance(response, dict) else None


def _error_message(event: bytes) -> str:
    try:
        document = from_json(event_data(event) or b"")
    except ValueError:
        return "an error event without details"
    if isinstance(document, dict):
        inner = document.get("error")
        source = inner if isinstance(inner, dict) else document
        message = source.get("message")
        if isinstance(message, str) and message:
            return message
    return to_json(document).decode()[:500]
