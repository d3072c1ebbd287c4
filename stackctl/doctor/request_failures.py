"""The requests a running vLLM refused or failed, per class, from its log's tail: how many, the
latest one, and the fix (the window, the proxy's system placement, the parser, the template)."""

from __future__ import annotations

from collections import deque

from stackctl.doctor.context import DoctorContext
from stackctl.doctor.result import CheckResult, ok, warn
from stackctl.errors import StackError

NAME = "request-failures"
# How far back the log is read: a busy engine logs a few lines per request.
TAIL_LINES = 5000


def check_request_failures(ctx: DoctorContext) -> list[CheckResult]:
    # Imported here: the signatures compile their patterns, which `stackctl --help` need not wait for.
    from stackctl.diagnosis import context_for
    from stackctl.diagnosis.request_tally import tally_request_failures

    try:
        tail = deque(ctx.runtime.logs("vllm", False), maxlen=TAIL_LINES)
    except StackError:
        return [ok(NAME, "vLLM has no log yet (not started)")]
    tallies = tally_request_failures(tail, context_for("vllm", ctx.config))
    if not tallies:
        return [ok(NAME, f"no request failed in the last {len(tail)} lines of vLLM's log")]
    return [warn(NAME, f"{tally.count} × {tally.latest.summary} (latest: {_shortened(tally.latest.evidence)})",
                 tally.latest.fix.text) for tally in tallies]


def _shortened(line: str, limit: int = 160) -> str:
    line = line.strip()
    return line if len(line) <= limit else line[:limit - 1].rstrip() + "…"
