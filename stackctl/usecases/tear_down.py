"""`down`: stop every service of the stack; data (model cache, metrics, certificates) stays."""

from __future__ import annotations

from stackctl.stack import Stack


def tear_down(stack: Stack) -> list[str]:
    """The services that were stopped, dependents first (their outlines are enough: nothing is
    rendered and no engine chosen to stop them)."""
    return stack.runtime.down(stack.outlines)
