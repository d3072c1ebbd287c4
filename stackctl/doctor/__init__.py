"""`stackctl doctor`: catch the known traps of a GPU box before `up` does (one row per check)."""

from stackctl.doctor.result import CheckResult, Status, any_failed
from stackctl.doctor.runner import CHECKS, run_checks

__all__ = ["CHECKS", "CheckResult", "Status", "any_failed", "run_checks"]
