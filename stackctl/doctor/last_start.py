"""The last failed `up`: what stopped it, diagnosed from the log tail it recorded, with the fix."""

from __future__ import annotations

import time

from stackctl.doctor.context import DoctorContext
from stackctl.doctor.result import CheckResult, fail, ok, warn

NAME = "last-start"


def check_last_start(ctx: DoctorContext) -> CheckResult:
    # Imported here: the signatures compile ~60 patterns, which `stackctl --help` need not wait for.
    from stackctl.diagnosis import diagnose_service_log
    from stackctl.diagnosis.start_record import read_failed_start, stack_file_sha256

    record = read_failed_start(ctx.layout)
    if record is None:
        return ok(NAME, "no failed `up` recorded")
    when = _ago(time.time() - record.failed_at)
    # A failed start always gets a reading: a known failure, else its decisive error line.
    diagnosis = diagnose_service_log(record.service, record.log_tail, ctx.config, failed=True,
                                     failure=record.message)
    changed = record.stack_file_sha256 != stack_file_sha256(ctx.layout)
    if diagnosis is None:  # nothing recorded at all
        return warn(NAME, f"`up` failed {when}: {record.message}", f"read the whole log: `stackctl logs {record.service}`")
    found = f"`up` failed {when} ({record.service}): {diagnosis.summary}"
    if changed:
        return warn(NAME, f"{found}; stack.yaml changed since",
                    f"if not done yet: {diagnosis.fix.text}; then `stackctl up`")
    return fail(NAME, found, diagnosis.fix.text)


def _ago(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s ago"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min ago"
    if seconds < 172800:
        return f"{seconds / 3600:.0f} h ago"
    return f"{seconds / 86400:.0f} days ago"
