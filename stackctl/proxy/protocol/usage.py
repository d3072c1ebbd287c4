"""The backend's usage report, read the same way on every route: prompt and completion tokens,
and how many prompt tokens vLLM's prefix cache served.

Chat and completions replies say `prompt_tokens` / `completion_tokens` /
`prompt_tokens_details.cached_tokens` (vLLM with --enable-prompt-tokens-details), Responses
replies `input_tokens` / `output_tokens` / `input_tokens_details.cached_tokens`. Clients get
these fields as the backend sent them; the proxy reads them for its metrics, the token limit
and the session's turn. Reading never fails a reply: what is not a count reads as 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_core import from_json


@dataclass(frozen=True)
class ReportedUsage:
    prompt: int  # the whole prompt, cached or not
    completion: int
    cached: int  # of `prompt`, served from the prefix cache


def chat_usage(usage: Any) -> ReportedUsage | None:
    """A chat or completions `usage` object; None when there is none."""
    return _usage(usage, "prompt_tokens", "completion_tokens", "prompt_tokens_details")


def responses_usage(usage: Any) -> ReportedUsage | None:
    """A Responses API `usage` object; None when there is none."""
    return _usage(usage, "input_tokens", "output_tokens", "input_tokens_details")


def _usage(usage: Any, prompt: str, completion: str, details: str) -> ReportedUsage | None:
    if not isinstance(usage, dict):
        return None
    return ReportedUsage(_count(usage.get(prompt)), _count(usage.get(completion)), _cached(usage.get(details)))


def chat_usage_in(document: bytes) -> ReportedUsage | None:
    """The `usage` of a chat or completions reply (or stream chunk), as JSON bytes."""
    try:
        parsed = from_json(document)
    except ValueError:
        return None
    return chat_usage(parsed.get("usage")) if isinstance(parsed, dict) else None


def _cached(details: Any) -> int:
    return _count(details.get("cached_tokens")) if isinstance(details, dict) else 0


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
