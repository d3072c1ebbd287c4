"""Read a service's log and name the failure.

The log is cut into engine starts (a compose container's log holds every restart); the latest start
with a fatal failure is diagnosed, its heaviest signature winning (the latest among equals), so a
named root cause beats the generic error it leads to. A warning-only diagnosis is returned when no
start failed.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence

from stackctl.config import StackConfig
from stackctl.diagnosis.evidence import Evidence, read_stated_settings
from stackctl.diagnosis.signatures import SIGNATURES
from stackctl.diagnosis.verdict import Diagnosis, DiagnosisContext, Severity

# How many log lines a failed start is diagnosed from: vLLM's multi-process tracebacks are long,
# and the root cause is often a few hundred lines above the last one.
DIAGNOSIS_LOG_LINES = 400

# Lines vLLM writes once per start: the version banner, the parsed arguments, argparse's usage.
_START_OF_RUN = re.compile(
    r"vLLM API server version|non-default args:|args: Namespace\(|^\s*usage: |Starting vLLM API server"
)
# One pass over each line decides whether any signature can match it at all.
_ANY_TRIGGER = re.compile("|".join(f"(?:{entry.trigger.pattern})" for entry in SIGNATURES), re.IGNORECASE)


def diagnose_log(lines: Iterable[str], context: DiagnosisContext | None = None) -> Diagnosis | None:
    """The failure this log shows, with its fix; None when no known signature is in it."""
    context = context or DiagnosisContext()
    cleaned = [line.rstrip("\r\n") for line in lines]
    advisory: Diagnosis | None = None
    for run in reversed(_runs(cleaned)):
        diagnosis = _diagnose_run(run, context)
        if diagnosis is None:
            continue
        if diagnosis.severity is Severity.fatal:
            return diagnosis
        advisory = advisory or diagnosis
    return advisory


def diagnose_service_log(service: str, lines: Iterable[str], config: StackConfig | None = None) -> Diagnosis | None:
    """diagnose_log with what the stack knows: the user's extra flags and which key sets each port."""
    return diagnose_log(lines, context_for(service, config))


def context_for(service: str, config: StackConfig | None) -> DiagnosisContext:
    if config is None:
        return DiagnosisContext(service=service)
    port_keys = {port: f"ports.{name}" for name, port in config.ports.model_dump().items()}
    return DiagnosisContext(service=service, extra_args=tuple(config.vllm.extra_args), port_keys=port_keys)


def _runs(lines: list[str]) -> list[list[str]]:
    starts = [index for index, line in enumerate(lines) if index and _START_OF_RUN.search(line)]
    bounds = [0, *starts, len(lines)]
    return [lines[begin:end] for begin, end in itertools.pairwise(bounds) if end > begin]


def _diagnose_run(run: Sequence[str], context: DiagnosisContext) -> Diagnosis | None:
    candidates = []
    for index, line in enumerate(run):
        if not _ANY_TRIGGER.search(line):
            continue
        for order, entry in enumerate(SIGNATURES):
            if entry.trigger.search(line):
                candidates.append((entry.weight, index, -order, entry))
    if not candidates:
        return None
    settings = read_stated_settings(run)
    for _weight, index, _order, entry in sorted(candidates, key=lambda item: item[:3], reverse=True):
        try:
            return entry.build(Evidence(run, index, context, settings))
        except (KeyError, ValueError, IndexError):
            # A line that triggers but lacks the values its builder reads (a cut paste): try the next.
            continue
    return None
