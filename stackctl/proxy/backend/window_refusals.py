"""A backend's refusal of a request that does not fit the model's window, read for its numbers.

vLLM words it differently from release to release; each wording below comes from a real body
(tests/data/context_refusals, tests/data/vllm_request_errors). What the proxy needs from it:
the window, the prompt's length when stated (exactly, or "at least"), and whether the prompt
alone is too long (nothing to correct: the client must shorten it) or only max_tokens is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from stackctl.proxy.backend.error_hints import error_message

_WINDOW = re.compile(r"maximum context length is (?P<window>\d+) tokens")
# vLLM before 0.11 and OpenAI: "you requested T tokens (P in the messages, C in the completion)"
_REQUESTED = re.compile(
    r"\((?P<prompt>\d+) in the messages, (?P<completion>\d+) in the completion\)"
)
# OpenAI, and vLLM with max_tokens unset: "your messages resulted in P tokens"
_RESULTED = re.compile(r"your messages resulted in (?P<prompt>\d+) tokens")
# vLLM 0.32: "your prompt contains [at least ]P input tokens, which exceeds this limit even
# without any output tokens"; "your prompt contains N characters (more than ...)"
_PROMPT_TOKENS = re.compile(
    r"your prompt contains (?P<at_least>at least )?(?P<prompt>\d+) input tokens"
)
_PROMPT_CHARACTERS = re.compile(r"your prompt contains \d+ characters")
# vLLM 0.32: "max_tokens=X cannot be greater than max_model_len=W"
_OUTPUT_OVER_WINDOW = re.compile(
    r"(?:max_tokens|max_completion_tokens)=\d+ cannot be greater than max_model_len=(?P<window>\d+)"
)
# vLLM 0.5-0.10: "'max_tokens' or 'max_completion_tokens' is too large: X[. ... your request has
# P input tokens]"
_OUTPUT_TOO_LARGE = re.compile(r"'max_tokens'(?: or 'max_completion_tokens')? is too large: \d+")
_REQUEST_HAS = re.compile(r"your request has (?P<prompt>\d+) input tokens")
# vLLM 0.32's get_max_tokens: "Input length (P) exceeds model's maximum context length (W)."
_INPUT_LENGTH = re.compile(
    r"Input length \((?P<prompt>\d+)\) exceeds model's maximum context length \((?P<window>\d+)\)"
)
# vLLM 0.9-0.10 (multimodal-aware check): "The decoder prompt (length P) is longer than the maximum
# model length of W"; older: "Prompt length of P is longer than the maximum model length of W"
_PROMPT_LONGER = re.compile(
    r"(?:prompt \(length |Prompt length of )(?P<prompt>\d+)\)? is longer than the maximum model length of "
    r"(?P<window>\d+)"
)


@dataclass(frozen=True)
class WindowRefusal:
    """What a window refusal says; None where it does not say."""

    prompt_too_long: bool  # False: only the output budget was too large
    window: int | None
    prompt_tokens: int | None
    # The backend stopped counting past the window: the prompt has at least this many tokens.
    at_least: bool = False


def read_window_refusal(status: int, body: str | bytes) -> WindowRefusal | None:
    """The refusal in a 400 body, or None when the body is about something else."""
    if status != 400:
        return None
    message = error_message(body)
    found = _INPUT_LENGTH.search(message)
    if found:
        return WindowRefusal(True, int(found["window"]), int(found["prompt"]))
    found = _OUTPUT_OVER_WINDOW.search(message)
    if found:
        return WindowRefusal(False, int(found["window"]), None)
    found = _PROMPT_LONGER.search(message)
    if found:
        return WindowRefusal(True, int(found["window"]), int(found["prompt"]))
    window = _WINDOW.search(message)
    size = int(window["window"]) if window else None
    if _OUTPUT_TOO_LARGE.search(message):
        has = _REQUEST_HAS.search(message)
        prompt = int(has["prompt"]) if has else None
        return WindowRefusal(
            prompt is not None and size is not None and prompt >= size, size, prompt
        )
    if size is None:
        return None
    found = _PROMPT_TOKENS.search(message)
    if found:
        return WindowRefusal(True, size, int(found["prompt"]), at_least=bool(found["at_least"]))
    if _PROMPT_CHARACTERS.search(message):
        return WindowRefusal(True, size, None)
    found = _RESULTED.search(message)
    if found:
        return WindowRefusal(int(found["prompt"]) >= size, size, int(found["prompt"]))
    found = _REQUESTED.search(message)
    if found:
        prompt = int(found["prompt"])
        return WindowRefusal(prompt >= size, size, prompt)
    return None
