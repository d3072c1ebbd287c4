"""What stands where a prompt changed: the usual suspects of a lost prefix cache.

Clients break their own prefix with text that changes per request: a date or time in the system
prompt, a request or session id, a per-request billing header. Without a capture the tracker
knows only the 32-byte block where the request first differs (fingerprint.py); it looks at the
new text there, while it has it, for such a token. One that overlaps the block is named, and
its first byte given as where the change is: the previous text is gone, so this is the best
reading of the evidence, and it names the usual causes exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Most specific first: a timestamp also holds a date and a time of day.
_VOLATILE: tuple[tuple[str, re.Pattern[bytes]], ...] = (
    ("a per-request billing header", re.compile(rb"x-anthropic-billing-header:[^\n]*|cc_version=[^;\n]*")),
    ("a timestamp", re.compile(
        rb"\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
    )),
    ("an id (UUID)", re.compile(rb"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")),
    ("a Unix timestamp", re.compile(rb"(?<![0-9])1[5-9][0-9]{8}(?:[0-9]{3})?(?![0-9])")),
    ("a date", re.compile(
        rb"\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{2,4}"
        rb"|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? +(?:\d{1,2} +)?"
        rb"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* +\d{1,2}(?:, +\d{4})?"
        rb"|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* +\d{1,2}, +\d{4}"
    )),
    ("a time of day", re.compile(rb"(?<![0-9])\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?![0-9])")),
    ("an id (hex)", re.compile(rb"(?<![0-9a-fA-F])[0-9a-fA-F]{16,}(?![0-9a-fA-F])")),
)
# How far around the block to look: a token that starts before it and reaches into it counts.
_MARGIN = 48


@dataclass(frozen=True, slots=True)
class Suspect:
    kind: str  # "a timestamp"
    offset: int  # its first byte in the part


def suspect_at(data: bytes, offset: int, span: int) -> Suspect | None:
    """A volatile token of `data` overlapping [offset, offset + span), most specific first."""
    start = max(0, offset - _MARGIN)
    window = data[start:offset + span + _MARGIN]
    for kind, pattern in _VOLATILE:
        for match in pattern.finditer(window):
            first, last = start + match.start(), start + match.end()
            if first < offset + max(span, 1) and last > offset:
                return Suspect(kind, first)
    return None
