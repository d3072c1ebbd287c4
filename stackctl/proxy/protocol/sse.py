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
    """Feed arbitrary network reads; get back complete raw events (terminator included).

    The per-token path (`complete`) hands over every whole event of a read as one block,
    without a regex when the stream uses LF line endings only (vLLM, SGLang, llama.cpp)."""

    def __init__(self) -> None:
        self._buffer = b""

    def complete(self, data: bytes) -> bytes:
        """The whole events received so far, as one block; an unfinished one waits for more."""
        buffer = self._buffer + data if self._buffer else data
        if b"\r" not in buffer:
            end = buffer.rfind(b"\n\n") + 2
        else:
            end = 0
            for match in _EVENT_END.finditer(buffer):
                end = match.end()
        if end <= 1:  # no event ends in the buffer (rfind gave -1)
            self._buffer = buffer
            return b""
        self._buffer = buffer[end:]
        return buffer[:end]

    def feed(self, data: bytes) -> list[bytes]:
        return split_events(self.complete(data))

    def rest(self) -> bytes:
        """Bytes after the last complete event (a stream cut mid-event leaves some)."""
        rest, self._buffer = self._buffer, b""
        return rest


def split_events(block: bytes) -> list[bytes]:
    """A block of whole events (from `EventSplitter.complete`) as single events."""
    if not block:
        return []
    if b"\r" not in block:
        return [event + b"\n\n" for event in block.split(b"\n\n")[:-1]]
    events = []
    start = 0
    for match in _EVENT_END.finditer(block):
        events.append(block[start : match.end()])
        start = match.end()
    return events


def event_payloads(block: bytes) -> list[bytes | None]:
    """The data of each event in a block of whole events (None for comment-only events)."""
    if b"\r" in block:
        return [event_data(event) for event in split_events(block)]
    return [
        # The common case (one `data:` line) without the general parser.
        event[6:] if event.startswith(b"data: ") and b"\n" not in event else event_data(event)
        for event in block.split(b"\n\n")[:-1]
    ]


def event_data(raw_event: bytes) -> bytes | None:
    """The event's data field (multi-line data joined by LF), or None for comment-only events."""
    if raw_event.startswith(b"data: ") and raw_event.find(b"\n") == len(raw_event) - 2:
        # The common case (one `data:` line, LF endings) without the general parser.
        return raw_event[6:-2]
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
