"""What an error line says went wrong, with the fix in stackctl's terms (the fallback's reading)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StatedCause:
    """What an error line says went wrong, with the fix in stackctl's terms."""

    name: str  # short, for the diagnosis's values: "version mismatch: outlines", "socket /x.sock"
    text: str  # the fix sentence
    key: str | None = None  # the stack.yaml key that applies it, where one does
    env: str | None = None  # the variable that applies it, where one does
    flag: str | None = None  # the flag that applies it, where one does
