"""What one doctor check found: ok / warn / fail, what was seen, and the exact fix."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum


class Status(str, Enum):
    ok = "ok"
    warn = "warn"
    fail = "fail"


@dataclass(frozen=True)
class CheckResult:
    name: str
    status: Status
    found: str
    # Empty when nothing needs doing.
    fix: str = ""

    def to_dict(self) -> dict[str, str]:
        data = asdict(self)
        data["status"] = self.status.value
        return data


def ok(name: str, found: str) -> CheckResult:
    return CheckResult(name, Status.ok, found)


def warn(name: str, found: str, fix: str) -> CheckResult:
    return CheckResult(name, Status.warn, found, fix)


def fail(name: str, found: str, fix: str) -> CheckResult:
    return CheckResult(name, Status.fail, found, fix)


def any_failed(results: list[CheckResult]) -> bool:
    return any(result.status is Status.fail for result in results)
