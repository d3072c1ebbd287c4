"""What every client configuration is made of: the stack's base URL, the served model and its
window, and a client key."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

# What clients may spend on one reply: a quarter of the window, at most 32k (Claude Code's own
# default); opencode and OpenClaw keep this much of the window free when they compact.
_MAX_OUTPUT = 32768


class ReachableModel(Protocol):
    """A served model where clients reach it (a `Connection`, or `up`'s endpoint on this machine)."""

    @property
    def base_url(self) -> str: ...  # without /v1

    @property
    def model(self) -> str: ...

    @property
    def context_tokens(self) -> int: ...


@dataclass(frozen=True)
class ClientKey:
    name: str
    value: str = field(repr=False)


@dataclass(frozen=True)
class Connection:
    """The stack as one client reaches it."""

    base_url: str  # without /v1
    model: str  # the served model's name: it resolves on every proxy, aliases or not
    context_tokens: int
    key: ClientKey

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    @property
    def output_tokens(self) -> int:
        return min(_MAX_OUTPUT, self.context_tokens // 4)
