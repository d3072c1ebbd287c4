"""A failure signature: the line that betrays it, how much it says, and how to read the fix from it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity

# When several lines of one start match, the heaviest wins (the latest among equals):
# the root cause a message names beats the symptom it leads to, which beats a mere warning.
ROOT_CAUSE = 30
# An out-of-memory error: its phase (graph capture, loading, profiling) is read from the
# traceback, and a message that names its own cause (KV cache, Mamba blocks) still beats it.
OUT_OF_MEMORY = 25
# A consequence that usually has a root cause logged next to it (no GPU, an NCCL system error).
CONSEQUENCE = 20
# A warning the engine survives; reported only when nothing fatal is found.
ADVISORY = 5

Builder = Callable[[Evidence], Diagnosis]


@dataclass(frozen=True)
class Signature:
    # The cause this signature usually yields (a builder may refine it, e.g. by OOM phase).
    cause: Cause
    trigger: re.Pattern[str]
    build: Builder
    weight: int = ROOT_CAUSE


def signature(cause: Cause, trigger: str, build: Builder, weight: int = ROOT_CAUSE) -> Signature:
    return Signature(cause, re.compile(trigger, re.IGNORECASE), build, weight)


def images_key(evidence: Evidence) -> str:
    """The `images:` key of the service whose log this is (`images.SERVICE` for Docker's own log)."""
    service = evidence.context.service
    return f"images.{service}" if service not in ("docker", "compose", "supervisord") else "images.SERVICE"


def found(evidence: Evidence, cause: Cause, summary: str, fix: Fix, *,
          severity: Severity = Severity.fatal, **values: str | float) -> Diagnosis:
    """The diagnosis for `evidence`: its line is the evidence shown to the user."""
    return Diagnosis(cause, summary, fix, evidence.line, severity, values)
