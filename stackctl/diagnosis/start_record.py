"""What a failed `up` leaves behind for `doctor`: the service that failed and its log tail.

Written to the stack's state directory by a failed `up` (either runtime), removed by the next
successful one. Secret values from .env are masked before anything is written.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

from pydantic import BaseModel, ValidationError

from stackctl.envfile import secret_values
from stackctl.layout import StackLayout

RECORD_NAME = "last-failed-start.json"
_MASK = "***"


class FailedStart(BaseModel):
    service: str
    # The runtime's one-line account ("vllm exited during start; full log: ...").
    message: str
    log_tail: list[str]
    runtime: str
    failed_at: float
    # sha256 of stack.yaml when it failed: doctor tells "still configured so" from "changed since".
    stack_file_sha256: str


def record_path(layout: StackLayout) -> Path:
    return layout.state / RECORD_NAME


def record_failed_start(layout: StackLayout, *, service: str, message: str, log_tail: list[str],
                        runtime: str) -> Path:
    secrets = [value for value in secret_values(layout.env_file) if len(value) >= 8]
    record = FailedStart(
        service=service, message=_masked(message, secrets), log_tail=[_masked(line, secrets) for line in log_tail],
        runtime=runtime, failed_at=time.time(), stack_file_sha256=stack_file_sha256(layout),
    )
    path = record_path(layout)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(record.model_dump_json(indent=2))
    temporary.chmod(0o600)
    os.replace(temporary, path)
    return path


def read_failed_start(layout: StackLayout) -> FailedStart | None:
    """The last failed start, or None (never recorded, cleared, or unreadable)."""
    try:
        return FailedStart.model_validate_json(record_path(layout).read_text())
    except (OSError, ValidationError):
        return None


def clear_failed_start(layout: StackLayout) -> None:
    record_path(layout).unlink(missing_ok=True)


def stack_file_sha256(layout: StackLayout) -> str:
    try:
        return hashlib.sha256(layout.stack_file.read_bytes()).hexdigest()
    except OSError:
        return ""


def _masked(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, _MASK)
    return text
