"""The one-line hint for a log tail: kept for callers of the old API; stackctl.diagnosis does the work."""

from __future__ import annotations

from stackctl.diagnosis import diagnose_log


def hint_for(log_lines: list[str]) -> str | None:
    """The cause and fix of the failure the log shows, as one line; None when none is known."""
    diagnosis = diagnose_log(log_lines)
    return diagnosis.one_line() if diagnosis else None
