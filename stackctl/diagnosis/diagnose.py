"""Read a service's log and name the failure.

The log is cut into engine starts (a compose container's log holds every restart); the latest start
with a fatal failure is diagnosed, its heaviest signature winning (the latest among equals), so a
named root cause beats the generic error it leads to. Where no signature knows the latest start's
failure, the fallback leads with its decisive error line and the remedy the log names. A
warning-only diagnosis is returned when no start failed.
"""

from __future__ import annotations

import itertools
import platform
import re
from collections.abc import Iterable, Sequence

from stackctl.config import StackConfig
from stackctl.diagnosis.evidence import Evidence, read_stated_settings
from stackctl.diagnosis.fallback import read_fallback
from stackctl.diagnosis.log_lines import error_block
from stackctl.diagnosis.signatures import SIGNATURES
from stackctl.diagnosis.verdict import Diagnosis, DiagnosisContext, Severity
from stackctl.vllm_args import stackctl_flags

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
    """The failure this log shows, with its fix; None only when the log shows no error at all and
    the start is not known to have failed."""
    context = context or DiagnosisContext()
    cleaned = [line.rstrip("\r\n") for line in lines]
    runs = _runs(cleaned) or [[]]
    advisory: Diagnosis | None = None
    fallback: Diagnosis | None = None
    for latest, run in zip(itertools.chain([True], itertools.repeat(False)), reversed(runs), strict=False):
        known = _diagnose_run(run, context)
        if known is not None and known[0].severity is Severity.fatal:
            return known[0]
        advisory = advisory or (known[0] if known else None)
        if latest:
            reading = read_fallback(run, context)
            if reading is not None and reading.diagnosis.severity is Severity.fatal:
                if known is not None and reading.line is not None and _same_error(
                        run, known[1], reading.line, reading.diagnosis.evidence):
                    # The crash is the traceback of a failure a signature knows (a request's error).
                    return known[0]
                # An error no signature knows stopped the latest start: it beats an older start's.
                return reading.diagnosis
            fallback = reading.diagnosis if reading else None
    return advisory or fallback


# A line that is a log record of its own (a level word), not the rest of the message above it.
_OWN_RECORD = re.compile(r"\b(?:DEBUG|INFO|WARN(?:ING)?|ERROR|CRITICAL|FATAL)\b|level=", re.IGNORECASE)


def _same_error(run: Sequence[str], trigger: re.Pattern[str], decisive_line: int, decisive_text: str) -> bool:
    """The decisive error is one a signature knows: the signature matches its message (with the lines
    it continues on) or a line of the same error above it (its record, its traceback)."""
    # A client's exception states the HTTP status on the line after its message (.NET's
    # "Service request failed." then "Status: 504 (Gateway Time-out)"): read as one message.
    following = run[decisive_line + 1: decisive_line + 2]
    continued = " ".join([decisive_text, *(line for line in following if not _OWN_RECORD.search(line))])
    return bool(trigger.search(continued)) or any(
        trigger.search(run[index]) for index in error_block(list(run), decisive_line))


def diagnose_service_log(service: str, lines: Iterable[str], config: StackConfig | None = None, *,
                         failed: bool | None = None, failure: str | None = None) -> Diagnosis | None:
    """diagnose_log with what the stack knows: the user's extra flags, which key sets each port,
    and whether (and how, in the runtime's words) the service failed to start. The services run on
    this host, so its architecture is theirs."""
    return diagnose_log(lines, context_for(service, config, failed=failed, failure=failure,
                                           machine=platform.machine()))


def context_for(service: str, config: StackConfig | None, *, failed: bool | None = None,
                failure: str | None = None, machine: str | None = None) -> DiagnosisContext:
    if config is None:
        return DiagnosisContext(service=service, failed=failed, failure=failure, machine=machine)
    port_keys = {port: f"ports.{name}" for name, port in config.ports.model_dump().items()}
    return DiagnosisContext(service=service, extra_args=tuple(config.vllm.extra_args),
                            stackctl_flags=stackctl_flags(config), port_keys=port_keys, failed=failed, failure=failure,
                            machine=machine, images=dict(config.images))


def _runs(lines: list[str]) -> list[list[str]]:
    starts = [index for index, line in enumerate(lines) if index and _START_OF_RUN.search(line)]
    bounds = [0, *starts, len(lines)]
    return [lines[begin:end] for begin, end in itertools.pairwise(bounds) if end > begin]


def _diagnose_run(run: Sequence[str], context: DiagnosisContext) -> tuple[Diagnosis, re.Pattern[str]] | None:
    """The heaviest known signature of the run, and the trigger it matched by."""
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
            return entry.build(Evidence(run, index, context, settings)), entry.trigger
        except (KeyError, ValueError, IndexError):
            # A line that triggers but lacks the values its builder reads (a cut paste): try the next.
            continue
    return None
