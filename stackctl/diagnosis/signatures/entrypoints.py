"""A container whose entrypoint the runtime may not execute (runc's exec permission denied): the file's
execute bit, not its owner."""

from __future__ import annotations

from stackctl.diagnosis.entrypoint_permissions import EXEC_DENIED, exec_denied, not_executable_fix
from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _entrypoint_not_executable(evidence: Evidence) -> Diagnosis:
    path = exec_denied(evidence.text) or ""
    return found(evidence, Cause.entrypoint_not_executable,
                 f"the container runtime may not execute {path or 'the entrypoint'} (permission denied), so the "
                 "container does not start", Fix(not_executable_fix(path)), **({"path": path} if path else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.entrypoint_not_executable, unnamed(EXEC_DENIED), _entrypoint_not_executable),
)
