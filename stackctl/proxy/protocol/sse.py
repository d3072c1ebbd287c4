"""Server-sent events: split a byte stream into whole events, read their data, write events.

The proxy never re-frames an OpenAI stream it passes through; it only needs event boundaries
so that an edit (dropping `"tool_calls": []`) never straddles two network reads.
"""

from __future__ import annotations

import re

from pydantic_core import to_json

# Spec: events end with a blank line; lines end with CRLF, LF or CR.
_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")
_LINE_SPLIT = re.compile(rb"\r\n|\n|\r")


class EventSplitter:
    """Feed arbitrary network reads; get back complete raw events (terminator included)."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, data: bytes) -> list[bytes]:
        buffer = self._buffer + data if self._buffer else data
        events: list[bytes] = []
        start = 0
        while True:
            match = _EVENT_END.search(buffer, start)
            if match is None:
                break
            events.append(buffer[start : match.end()])
            start = match.end()
        self._buffer = buffer[start:]
        return events

    def rest(self) -> bytes:
        """Bytes after the last complete event (a stream cut mid-event leaves some)."""
        rest, self._buffer = self._buffer, b""
        return rest


def event_data(raw_event: bytes) -> bytes | None:
    """The event's data field (multi-line data joined by LF), or None for comment-only events."""
    if raw_event.startswith(b"data: ") and raw_event.count(b"\n") <= 2 and b"\r" not in raw_event:
        # The common case (one `data:` line, LF endings) without the general parser.
        return raw_event[6:].rstrip(b"\n")
    data_lines = []
    for line in _LINE_SPLIT.split(raw_event):
        if line.startswith(b"data:"):
            value = line[5:]
            data_lines.append(value[1:] if value.startswith(b" ") else value)
    return b"\n".join(data_lines) if data_lines else None


def encode_event(event_type: str, payload: dict[str, object]) -> bytes:
    """One Anthropic-style event: `event:` names the type, `data:` carries the JSON."""
    return (
        b"event: "
        + event_type.encode()
        + b"\ndata: "
        + to_json(payload)  # compact UTF-8 JSON, like json.dumps(..., ensure_ascii=False)
        + b"\n\n"
    )


PING_EVENT = encode_event("ping", {"type": "ping"})
