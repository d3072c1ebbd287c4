"""Causes a refused request states about the model's context window, whoever relays the refusal (vLLM,
llama.cpp's and MLX's servers, OpenAI's API, the gateways and clients that pass their errors on), for the
fallback to name the window's key in stack.yaml where the refusal asks only to shorten the request:

- a request longer than the window ("This model's maximum context length is 8192 tokens. However, your
  messages resulted in 11433 tokens", "request (24071 tokens) exceeds the available context size (8192
  tokens)", "Prompt exceeds maximum context length", "Please reduce the length of the messages ... Current
  length is 42328 while limit is 40000");
- an answer budget the window cannot hold beside the prompt ("'max_tokens' or 'max_completion_tokens' is
  too large: 8192", "you requested 32000 output tokens and your prompt contains at least 769 input tokens");
- a client that needs a longer window than the one served ("Model context window too small (4096
  tokens). Minimum is 16000").
"""

from __future__ import annotations

import re

from stackctl.diagnosis.stated_cause import StatedCause

WINDOW_KEY = "vllm.max_model_len"
_WINDOW_FLAG = "--max-model-len"
# The refusal of a request past the window, and the window where the words state it.
OVER_WINDOW = re.compile(
    r"maximum context length is\s+(?P<window>\d+) tokens|exceeds the available context size \((?P<available>\d+) tokens\)"
    r"|\bexceeds (?:the )?(?:model's )?maximum context length|reduce the length of the (?:messages|prompt|input)"
    r"|\bcontext_length_exceeded\b", re.IGNORECASE)
# The request's own size, in the same refusals' words.
_REQUEST_SIZE = re.compile(r"your messages resulted in (?P<messages>\d+) tokens|you requested (?P<requested>\d+) tokens"
                           r"|request \((?P<request>\d+) tokens\)|Current length is (?P<current>\d+)", re.IGNORECASE)
_LIMIT = re.compile(r"while limit is (?P<limit>\d+)", re.IGNORECASE)
# The answer's budget (max_tokens) that leaves the prompt no room.
_ANSWER_BUDGET = re.compile(r"'?max_tokens'?(?: or '?max_completion_tokens'?)? is too large: (?P<asked>\d+)"
                            r"|you requested (?P<output>\d+) output tokens", re.IGNORECASE)
# A client's own minimum for the window.
# A model's own cap on the answer (OpenAI's "This model supports at most 16384 completion tokens").
_OUTPUT_LIMIT = re.compile(r"supports at most (?P<limit>\d+) completion tokens", re.IGNORECASE)
_WINDOW_TOO_SMALL = re.compile(r"context window too small \((?P<window>\d+) tokens\)\. Minimum is (?P<minimum>\d+)",
                               re.IGNORECASE)
_LONGER = (f"raise {WINDOW_KEY} in stack.yaml ({_WINDOW_FLAG}) if the model supports a longer context "
           "(max_position_embeddings in its config.json) and the GPU has memory for its KV cache")


def requests_stated(line: str) -> list[StatedCause]:
    """What a refused request states about the window: a client's minimum, an answer budget past it,
    a request longer than it."""
    too_small = _WINDOW_TOO_SMALL.search(line)
    if too_small:
        return [StatedCause("context window below the client's minimum", (
            f"the client needs a context window of at least {too_small['minimum']} tokens and the model is served "
            f"with {too_small['window']}: raise {WINDOW_KEY} in stack.yaml ({_WINDOW_FLAG}) to {too_small['minimum']} "
            "or more if the model supports it (max_position_embeddings in its config.json), or serve a model with a "
            "longer context"), WINDOW_KEY, flag=_WINDOW_FLAG)]
    budget = _ANSWER_BUDGET.search(line)
    over = OVER_WINDOW.search(line)
    if budget:
        window = f" ({over['window']} tokens)" if over and over["window"] else ""
        limit = _OUTPUT_LIMIT.search(line)
        past = (f"more than the model's limit on an answer ({limit['limit']} tokens)" if limit else
                f"more than the context window{window} leaves beside its prompt")
        return [StatedCause("answer budget past the context window", (
            f"the client reserves {budget['asked'] or budget['output']} tokens for its answer (max_tokens), {past}: "
            "lower max_tokens in the client (its maximum output tokens setting) so prompt and answer fit, or "
            f"{_LONGER}"), WINDOW_KEY, flag=_WINDOW_FLAG)]
    if not over:
        return []
    size = _REQUEST_SIZE.search(line)
    tokens = next((value for value in size.groupdict().values() if value), None) if size else None
    limit = _LIMIT.search(line)
    window = over["window"] or over["available"] or (limit["limit"] if limit else None)
    return [StatedCause("request past the context window", (
        f"the request{f' ({tokens} tokens)' if tokens else ''} is longer than the context window the model is served "
        f"with{f' ({window} tokens)' if window else ''}: {_LONGER}; otherwise shorten the request: compact or trim "
        "the conversation, and lower the max_tokens the client reserves for its answer"), WINDOW_KEY,
        flag=_WINDOW_FLAG)]
