"""A log read as `stackctl logs SERVICE --explain` reads it, with a default stack.yaml: whole (the
signatures, then the fallback) or by the fallback alone. Shared by the diagnosis unit tests."""

from __future__ import annotations

from stackctl.config import parse_stack_config
from stackctl.diagnosis import Cause, Diagnosis, diagnose_log
from stackctl.diagnosis.diagnose import context_for
from stackctl.diagnosis.fallback import fallback_diagnosis

DEFAULTS = parse_stack_config({})


def diagnosed(lines: list[str], service: str) -> Diagnosis:
    diagnosis = diagnose_log(lines, context_for(service, DEFAULTS))
    assert diagnosis is not None
    return diagnosis


def read_by_fallback(lines: list[str], service: str, *, failed: bool = False) -> Diagnosis:
    """The fallback's reading (`failed`: the service is known to have failed); it never names a
    class of its own."""
    diagnosis = fallback_diagnosis(lines, context_for(service, DEFAULTS, failed=failed))
    assert diagnosis is not None and diagnosis.cause is Cause.unrecognised
    return diagnosis
