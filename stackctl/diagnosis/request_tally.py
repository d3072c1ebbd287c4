"""Request failures in a running vLLM's log, counted per class: a conversation longer than the
window, a system message the chat template refuses, a tool call the parser cannot read, a model
without a chat template, automatic tool choice without its flags, a model name that is not served.

vLLM keeps serving through these, so they never stop a start; `doctor` shows how often each class
happened in the log's tail, the latest one's own words, and its fix.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from stackctl.diagnosis.evidence import Evidence, read_stated_settings
from stackctl.diagnosis.signature import Signature
from stackctl.diagnosis.signatures import SIGNATURES
from stackctl.diagnosis.signatures.requests import REQUEST_CAUSES
from stackctl.diagnosis.verdict import Cause, Diagnosis, DiagnosisContext

# The signatures that recognise a request's failure (several may share a class).
_REQUEST_SIGNATURES: tuple[Signature, ...] = tuple(entry for entry in SIGNATURES if entry.cause in REQUEST_CAUSES)


@dataclass(frozen=True)
class RequestTally:
    """One class of request failure: how many the lines hold, and the latest one read."""

    cause: Cause
    count: int
    latest: Diagnosis


def tally_request_failures(lines: Iterable[str], context: DiagnosisContext | None = None) -> list[RequestTally]:
    """Each class of request failure in `lines`, most frequent first. Adjacent lines of one failure
    (a traceback whose every record names the tool parser) count once."""
    run = [line.rstrip("\r\n") for line in lines]
    context = context or DiagnosisContext(service="vllm")
    counts: dict[Cause, int] = {}
    latest: dict[Cause, tuple[int, Signature]] = {}
    previous: dict[Cause, int] = {}
    for index, line in enumerate(run):
        for entry in _REQUEST_SIGNATURES:
            if not entry.trigger.search(line):
                continue
            if previous.get(entry.cause, -2) < index - 1:
                counts[entry.cause] = counts.get(entry.cause, 0) + 1
                latest[entry.cause] = (index, entry)
            previous[entry.cause] = index
            break
    settings = read_stated_settings(run)
    tallies = []
    for cause, count in counts.items():
        index, entry = latest[cause]
        try:
            diagnosis = entry.build(Evidence(run, index, context, settings))
        except (KeyError, ValueError, IndexError):
            continue
        tallies.append(RequestTally(cause, count, diagnosis))
    return sorted(tallies, key=lambda tally: -tally.count)
