"""What to change when vLLM refuses a request: one sentence to add to the error the client sees.

Pure and self-contained (the proxy imports nothing from the rest of stackctl): it reads the
backend's error body, recognises the refusals coding agents hit, and names the fix, in the
client's terms or stack.yaml's where the operator must act.
"""

from __future__ import annotations

import json
import re

_WINDOW = re.compile(r"maximum context length is (?P<window>\d+) tokens|maximum model length of (?P<model>\d+)")
# The engine's wording when the prompt alone is too long: "The decoder prompt (length 10127) is
# longer than the maximum model length of 8192", "Prompt length of 9000 is longer than ...".
_PROMPT_LENGTH = re.compile(r"(?:prompt \(length |Prompt length of )(?P<prompt>\d+)")
_REQUESTED = re.compile(
    r"requested (?P<requested>\d+) tokens \((?P<prompt>\d+) in the messages, (?P<completion>\d+) in the completion\)")
_PROMPT_ONLY = re.compile(r"your (?:prompt contains (?:at least )?|messages resulted in )(?P<prompt>\d+)")
_MAX_TOKENS_TOO_LARGE = re.compile(r"'max_tokens' or 'max_completion_tokens' is too large: (?P<max_tokens>\d+)")
_UNKNOWN_MODEL = re.compile(r"The model `(?P<name>[^`]*)` does not exist")
_SYSTEM_NOT_FIRST = re.compile(r"System message must be at the beginning", re.IGNORECASE)
_AUTO_TOOL_CHOICE = re.compile(r"tool choice requires --enable-auto-tool-choice")
_ROLES_ALTERNATE = re.compile(r"roles must alternate user/assistant", re.IGNORECASE)
_NO_CHAT_TEMPLATE = re.compile(r"default chat template is no longer allowed")

_WINDOW_KEY = "vllm.max_model_len in stack.yaml"


def hint_for_backend_error(status: int, body: str | bytes) -> str | None:
    """A hint to append to a backend error, or None when the error is not a known one.

    status: the backend's HTTP status (hints are only given for 4xx/5xx).
    body: the backend's error body as received, JSON (`{"error": {"message": ...}}`,
    `{"message": ...}`, `{"detail": ...}`) or plain text.
    The hint is one sentence; it adds to vLLM's own message and never replaces it.
    """
    if status < 400:
        return None
    message = error_message(body)
    return (_context_overflow(message) or _unknown_model(message) or _system_not_first(message)
            or _roles_alternate(message) or _auto_tool_choice(message) or _no_chat_template(message))


def error_message(body: str | bytes) -> str:
    """The message inside an error body (vLLM's, OpenAI's or a plain text one)."""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    try:
        document = json.loads(text)
    except ValueError:
        return text
    found = _message_in(document)
    return found if found is not None else text


def _message_in(document: object) -> str | None:
    if isinstance(document, str):
        return document
    if isinstance(document, dict):
        for key in ("message", "detail", "error"):
            if key in document:
                found = _message_in(document[key])
                if found is not None:
                    return found
    return None


def _context_overflow(message: str) -> str | None:
    too_large = _MAX_TOKENS_TOO_LARGE.search(message)
    if too_large:
        return (f"max_tokens {too_large['max_tokens']} does not fit the served context window: ask for fewer "
                f"output tokens (the window is {_WINDOW_KEY})")
    window = _WINDOW.search(message)
    if window is None:
        return None
    size = int(window["window"] or window["model"])
    requested = _REQUESTED.search(message)
    if requested:
        prompt, completion = int(requested["prompt"]), int(requested["completion"])
        if completion >= size:
            return (f"max_tokens ({completion}) alone fills the {size}-token window: ask for fewer output tokens, "
                    f"at most {max(size - prompt, 1)} for this conversation")
        if prompt < size:
            return (f"the conversation ({prompt} tokens) plus max_tokens ({completion}) exceed the {size}-token "
                    f"window: lower max_tokens to {size - prompt} or less, or compact the conversation")
        return (f"the conversation ({prompt} tokens) is longer than the {size}-token window: compact or trim it "
                f"(Claude Code: /compact), or raise {_WINDOW_KEY} if the model allows more")
    prompt_only = _PROMPT_ONLY.search(message) or _PROMPT_LENGTH.search(message)
    length = f" ({prompt_only['prompt']} tokens)" if prompt_only else ""
    return (f"the conversation{length} does not fit the {size}-token window: compact or trim it (Claude Code: "
            f"/compact), or raise {_WINDOW_KEY} if the model allows more")


def _unknown_model(message: str) -> str | None:
    found = _UNKNOWN_MODEL.search(message)
    if found is None:
        return None
    name = found["name"]
    return (f"the backend does not serve a model called `{name}`: use the served model name (served_model_name "
            f"in stack.yaml), or map `{name}` to it under `aliases:` in stack.yaml")


def _system_not_first(message: str) -> str | None:
    if not _SYSTEM_NOT_FIRST.search(message):
        return None
    return ("this model's chat template accepts one system message, first in the list: merge the later system "
            "messages into the first one (or send them as user messages)")


def _auto_tool_choice(message: str) -> str | None:
    if not _AUTO_TOOL_CHOICE.search(message):
        return None
    return ("vLLM was started without --enable-auto-tool-choice and --tool-call-parser: stackctl adds both from the "
            "model profile; check that vllm.extra_args does not replace them, then `stackctl up`")


def _roles_alternate(message: str) -> str | None:
    if not _ROLES_ALTERNATE.search(message):
        return None
    return ("this model's chat template wants at most one system message, first, then user and assistant turns "
            "strictly alternating: merge the system messages into the first one and consecutive messages of one "
            "role into one (or the operator gives vLLM a template that accepts them: --chat-template in "
            "vllm.extra_args)")


def _no_chat_template(message: str) -> str | None:
    if not _NO_CHAT_TEMPLATE.search(message):
        return None
    return ("the served model has no chat template, so it cannot answer chat requests: the operator gives vLLM one "
            "(--chat-template in vllm.extra_args in stack.yaml) or serves the model's instruct variant; "
            "completions (/v1/completions) work without one")
