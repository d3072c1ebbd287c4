"""supervisord asked to switch users while it runs as a user who cannot (user= as non-root)."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.supervisor_privileges import CANNOT_DROP, cannot_drop, cannot_drop_fix
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _cannot_drop(evidence: Evidence) -> Diagnosis:
    match = cannot_drop(evidence.text)
    uid = match["uid"] if match else None
    return found(evidence, Cause.supervisor_user_not_root,
                 "supervisord runs as a non-root user and its configuration asks it to switch users (user=)",
                 Fix(cannot_drop_fix(uid)), **({"uid": uid} if uid else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.supervisor_user_not_root, unnamed(CANNOT_DROP), _cannot_drop),
)
