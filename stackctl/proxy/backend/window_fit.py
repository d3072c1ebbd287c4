"""How much output fits: each served model's window, and a request's prompt size estimated
from its bytes, so that `max_tokens` never asks for more than the context has left.

Claude Code asks for 32000 output tokens (128000 with its default model) whatever the server's
window; vLLM refuses `max_tokens` above `max_model_len`, and some releases also refuse prompt +
max_tokens past it. The proxy learns:

- the window from the backend's model list (vLLM's `/v1/models` has `max_model_len`), read at
  start and whenever the model list is refreshed: no request pays for it;
- the prompt's size without asking the backend: the request body's bytes times the tokens per
  byte the backend reported (`usage.prompt_tokens`) for the last request of this model and API.
  Claude Code re-sends one growing conversation, so the ratio is close; the estimate only steers.

The backend stays the judge (fitted_calls.py): a release that caps generation at the window's
end just does; one that refuses states the exact prompt length, and one corrected retry follows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

# Before any reply taught a model's ratio: JSON request bodies run about this many bytes a token.
_UNTAUGHT_BYTES_PER_TOKEN = 4
# Never cap below this on an estimate alone: near the window's end an estimate that is a little
# high would cut a reply short; the backend's own answer corrects an estimate that is too low.
MIN_OUTPUT_TOKENS = 1024
# The estimate errs high by a little (a conversation's tokens per byte drift as it grows): a
# refusal and a retry cost more than a reply that may end a few hundred tokens earlier.
_MARGIN = 1.02
_MARGIN_TOKENS = 32


@dataclass
class WindowFit:
    windows: dict[str, int] = field(default_factory=dict)  # served model -> max_model_len
    _tokens_per_byte: dict[tuple[str, str], float] = field(default_factory=dict)

    def window(self, model: str) -> int | None:
        return self.windows.get(model)

    def estimate(self, model: str, api: str, body_bytes: int) -> int:
        """The prompt's tokens, estimated from the request's size; 0 until a reply taught us."""
        ratio = self._tokens_per_byte.get((model, api))
        return math.ceil(body_bytes * ratio * _MARGIN) + _MARGIN_TOKENS if ratio else 0

    def prompt_tokens(self, model: str, api: str, body_bytes: int) -> int:
        """The prompt's tokens, a central guess (no margin) for where a count must be given
        before the backend states it: Anthropic's message_start."""
        ratio = self._tokens_per_byte.get((model, api))
        return round(body_bytes * ratio) if ratio else body_bytes // _UNTAUGHT_BYTES_PER_TOKEN

    def budget(self, model: str, api: str, body_bytes: int, asked: int | None) -> int | None:
        """The max_tokens to send: what was asked, at most the window less the prompt."""
        window = self.windows.get(model)
        if asked is None or window is None:
            return asked  # no max_tokens: vLLM itself takes what is left of the window
        room = window - self.estimate(model, api, body_bytes)
        return max(1, min(asked, window, max(room, MIN_OUTPUT_TOKENS)))

    def corrected(self, model: str, asked: int, prompt_tokens: int | None) -> int | None:
        """The max_tokens that fits once the backend has stated the window (and the prompt)."""
        window = self.windows.get(model)
        if window is None:
            return None
        room = window - (prompt_tokens or 0)
        return min(asked, room) if room >= 1 else None

    def learn(self, model: str, api: str, body_bytes: int, prompt_tokens: int) -> None:
        if body_bytes > 0 and prompt_tokens > 0:
            self._tokens_per_byte[(model, api)] = prompt_tokens / body_bytes
