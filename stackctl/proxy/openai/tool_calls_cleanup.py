"""Remove empty `"tool_calls": []` from OpenAI replies, leaving every other byte alone.

vLLM 0.22 (the version in NGC images) sends `"tool_calls": []` in every streamed delta and
in plain messages; clients that test for the key (`if "tool_calls" in delta`) then treat a
text reply as a tool call. Editing bytes instead of re-serialising keeps the stream exactly
as the backend wrote it otherwise (key order, number formats, unicode escapes).

Why a regex is safe here: inside a JSON string every `"` is escaped, so `{` or `,` followed by
an unescaped `"tool_calls"` and `:` can only be a real object key.
"""

from __future__ import annotations

import re

_MARKER = b'"tool_calls"'
_COMPACT = b',"tool_calls":[]'
_AFTER_COMMA = re.compile(rb',\s*"tool_calls"\s*:\s*\[\s*\]')
_FIRST_KEY = re.compile(rb'\{(\s*)"tool_calls"\s*:\s*\[\s*\]\s*,?')


def strip_empty_tool_calls(data: bytes) -> bytes:
    """`data` is JSON documents or SSE events; returns them without empty tool_calls keys."""
    if _MARKER not in data:
        return data
    # vLLM's compact form first, without a regex (the same bytes the regex would drop).
    data = data.replace(_COMPACT, b"")
    if _MARKER not in data:
        return data
    data = _AFTER_COMMA.sub(b"", data)
    return _FIRST_KEY.sub(rb"{\1", data)
