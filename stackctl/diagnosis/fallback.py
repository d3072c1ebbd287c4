"""When no signature knows the failure: lead with the error line that decided it, then whatever
the log names as its own remedy, then the stack.yaml key that sets it.

A failed start never ends in "no known failure": without any error line, the runtime's own account
(a health gate that timed out, an exit code) says what to look at next.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from stackctl.diagnosis.log_lines import (
    ErrorLine,
    Weight,
    decisive_error,
    error_block,
    error_lines,
    stated_failure,
    strip_prefixes,
)
from stackctl.diagnosis.remedy import EXHAUSTED, Remedy, RemedyKind, named_remedies
from stackctl.diagnosis.stack_keys import Placement, as_flag, placement, switch
from stackctl.diagnosis.stated_causes import StatedCause, stated_causes
from stackctl.diagnosis.verdict import Cause, Diagnosis, DiagnosisContext, Fix, Severity

# How far around the decisive line hints are read (lines before: the error records that lead up
# to it; after: the hint lines some messages end with).
_BEFORE, _AFTER = 15, 6
# How far above its decisive error another process's traceback is read (vLLM's inspection subprocess).
_EARLIER = 200
# How many of the remedies a log names are printed.
_REMEDIES_SHOWN = 3
_SUMMARY_CHARS = 240
_TIMED_OUT = re.compile(r"did not become healthy in (?P<seconds>\d+) s")
# What to try where the log names nothing, per service.
_SERVICE_HINTS = {
    "vllm": "`stackctl doctor` checks the GPU, driver, image, flags and model fit",
    "nginx": "`stackctl render` and `nginx -t -c` on the rendered nginx.conf test the configuration",
    "prometheus": "`promtool check config` on the rendered prometheus.yml tests the configuration",
    # doctor checks only that the ports are free here: not DNS, reachability or the certificates.
    "certbot": "`stackctl doctor` checks that ports.http and ports.https are free on this host (not the hostname's "
               "DNS record, whether the internet reaches port 80, or the certificate directory: `sudo certbot "
               "certificates` lists what certbot has)",
    "filter-proxy": "`stackctl doctor` checks that the ports are free and that .env holds the keys (mode 0600)",
    "supervisord": "`stackctl status` shows which program would not start, and its own log "
                   "(`stackctl logs` with its name and --explain) why",
}


@dataclass(frozen=True)
class FallbackReading:
    diagnosis: Diagnosis
    # The decisive line's index in the run (None: the log shows no error line).
    line: int | None


def fallback_diagnosis(run: Sequence[str], context: DiagnosisContext) -> Diagnosis | None:
    """The decisive error of `run` and the remedies it names; None when the log shows no error and
    the start is not known to have failed."""
    reading = read_fallback(run, context)
    return reading.diagnosis if reading else None


def read_fallback(run: Sequence[str], context: DiagnosisContext) -> FallbackReading | None:
    """fallback_diagnosis, with where in the run its decisive line is."""
    lines = list(run)
    # A log without an error line may still state its failure in words (certbot's "is already listening").
    decisive = decisive_error(lines) or stated_failure(lines, warnings=bool(context.failed))
    if decisive is None:
        diagnosis = _without_error_line(lines, context)
        return FallbackReading(diagnosis, None) if diagnosis else None
    return FallbackReading(_with_error_line(lines, decisive, context), decisive.index)


def _with_error_line(lines: list[str], decisive: ErrorLine, context: DiagnosisContext) -> Diagnosis:
    fatal = context.failed if context.failed is not None else decisive.weight is Weight.crash
    window = _remedy_window(lines, decisive)
    traceback = [lines[index] for index in error_block(lines, decisive.index)]
    earlier = [strip_prefixes(line) for line in lines[max(0, decisive.index - _EARLIER):decisive.index + 1]]
    causes = stated_causes(window, context, traceback, earlier)
    remedies = _beside(causes, named_remedies(window))
    service = context.service
    message = _shortened(decisive.text)
    summary = f"{service} stopped on: {message}" if fatal else f"{service}'s log reports an error: {message}"
    named = [cause.name for cause in causes] + [remedy.name for remedy in remedies]
    return Diagnosis(Cause.unrecognised, summary, _fix(causes, remedies, context, fatal), decisive.text,
                     Severity.fatal if fatal else Severity.advisory,
                     {"error": decisive.text, **({"remedies": ", ".join(named)} if named else {})})


def _beside(causes: list[StatedCause], remedies: list[Remedy]) -> list[Remedy]:
    """The remedies a stated cause does not already say: an image the registry refuses names its
    `docker login` itself, after the image name to check; nginx's temp path its worker may not write,
    supervisord's log file and a program's working directory, the path to give access to."""
    if any(cause.name.startswith("image: ") for cause in causes):
        remedies = [remedy for remedy in remedies
                    if not (remedy.kind is RemedyKind.command and remedy.name.startswith("docker login"))]
    if any(cause.name.startswith(("nginx temp path: ", "supervisord log file: ", "working directory: "))
           for cause in causes):
        remedies = [remedy for remedy in remedies if remedy.kind is not RemedyKind.permission]
    return remedies


def _fix(causes: list[StatedCause], remedies: list[Remedy], context: DiagnosisContext, fatal: bool) -> Fix:
    service = context.service
    if causes:
        return _cause_fix(causes, remedies, context)
    if not remedies:
        hint = _SERVICE_HINTS.get(service)
        what = f"what stopped {service}" if fatal else f"the last error {service} logged"
        return Fix(f"no fix is named in the log: the error shown is {what}; search it in the "
                   f"engine's or service's issues, and read the whole log with `stackctl logs {service}`"
                   + (f"; {hint}" if hint else ""))
    # One remedy per sentence: a log that names a setting both ways ("set 'enforce_eager=True' or use
    # '--enforce-eager'") reads as one change.
    placed: dict[str, tuple[Remedy, Placement]] = {}
    for remedy in remedies:
        where = placement(remedy, service, context.port_keys)
        placed.setdefault(where.text, (remedy, where))
    shown = list(placed.values())[:_REMEDIES_SHOWN]
    first, where = shown[0]
    text = "the log names its own remedy: " + "; ".join(place.text for _, place in shown)
    flag = as_flag(first, service)
    # A switch is its flag alone (trust_remote_code=True: --trust-remote-code), with no value.
    is_switch = first.kind is RemedyKind.setting and switch(first.value) is not None
    return Fix(text + "; then `stackctl up`", key=where.key, flag=flag,
               env=first.name if first.kind is RemedyKind.env else None,
               value=None if (is_switch and flag) or first.kind in EXHAUSTED else first.value)


def _cause_fix(causes: list[StatedCause], remedies: list[Remedy], context: DiagnosisContext) -> Fix:
    """What the error states went wrong leads; what the log names as its remedy follows."""
    stated = [cause.text for cause in causes[:_REMEDIES_SHOWN]]
    also = list(dict.fromkeys(placement(remedy, context.service, context.port_keys).text for remedy in remedies))
    text = "the error states its cause: " + "; ".join(stated)
    if also:
        text += "; the log also names: " + "; ".join(also[:_REMEDIES_SHOWN])
    return Fix(text + "; then `stackctl up`", key=causes[0].key, env=causes[0].env, flag=causes[0].flag)


def _without_error_line(lines: list[str], context: DiagnosisContext) -> Diagnosis | None:
    if not context.failed:
        return None
    service = context.service
    last = next((strip_prefixes(line).strip() for line in reversed(lines) if line.strip()), "")
    account = context.failure or f"{service} failed to start"
    timed_out = _TIMED_OUT.search(account)
    shown = f"; its last line: {_shortened(last)}" if last else "; it wrote no log lines"
    if timed_out:
        key = f"start_timeouts.{service}"
        return Diagnosis(Cause.unrecognised, f"{account}, and its log shows no error{shown}",
                         Fix(f"if it was still loading, give it longer: raise {key} in stack.yaml above "
                             f"{timed_out['seconds']} s; if it hangs, `stackctl logs {service}` shows where",
                             key=key, value=timed_out["seconds"]), last, Severity.fatal)
    return Diagnosis(Cause.unrecognised, f"{account}, and its log shows no error{shown}",
                     Fix(f"read the whole log (`stackctl logs {service}`) and `stackctl status`; "
                         + _SERVICE_HINTS.get(service, "`stackctl doctor` checks the host's GPU, driver, Docker and ports")),
                     last, Severity.fatal)


def _remedy_window(lines: list[str], decisive: ErrorLine) -> list[str]:
    """The decisive message, the lines right after it, and the error records just above it, each with
    the quotes a structured log escaped inside its values read as quotes."""
    before = {line.index for line in error_lines(lines[max(0, decisive.index - _BEFORE):decisive.index])}
    start = max(0, decisive.index - _BEFORE)
    above = [strip_prefixes(lines[start + offset]) for offset in sorted(before)]
    after = [strip_prefixes(line) for line in lines[decisive.index + 1:decisive.index + 1 + _AFTER]]
    return [_unescaped(line) for line in (decisive.text, *after, *above)]


# A quote escaped inside a quoted value: logfmt's msg="... \"/path\": permission denied" (Go's %q, as
# Prometheus, its exporters and Docker's daemon write it), once or twice over.
_ESCAPED_QUOTE = re.compile(r'\\+"')


def _unescaped(line: str) -> str:
    return _ESCAPED_QUOTE.sub('"', line)


def _shortened(text: str) -> str:
    return text if len(text) <= _SUMMARY_CHARS else text[:_SUMMARY_CHARS - 1].rstrip() + "…"
