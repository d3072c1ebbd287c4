"""Name the fix when a service fails: read its log, return the cause, the change to make in
stackctl's own terms (stack.yaml key, the vLLM flag it becomes) and the values the log states.

Pure functions over log lines; `up`, `logs --explain` and `doctor` show what they return.
"""

from stackctl.diagnosis.diagnose import (
    DIAGNOSIS_LOG_LINES,
    context_for,
    diagnose_log,
    diagnose_service_log,
)
from stackctl.diagnosis.verdict import Cause, Diagnosis, DiagnosisContext, Fix, Severity

__all__ = [
    "DIAGNOSIS_LOG_LINES",
    "Cause",
    "Diagnosis",
    "DiagnosisContext",
    "Fix",
    "Severity",
    "context_for",
    "diagnose_log",
    "diagnose_service_log",
]
