"""A DCGM client that cannot reach nv-hostengine: not running, or no NVIDIA GPU for it on this host."""

from __future__ import annotations

from stackctl.diagnosis.dcgm_hostengine import HOSTENGINE_UNREACHABLE, hostengine_fix
from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _hostengine_unreachable(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.dcgm_hostengine_unreachable,
                 "a DCGM client could not connect to DCGM's host engine (nv-hostengine), so it has no GPU metrics",
                 Fix(hostengine_fix(), key="images.gpu-exporter"))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.dcgm_hostengine_unreachable, HOSTENGINE_UNREACHABLE.pattern, _hostengine_unreachable),
)
