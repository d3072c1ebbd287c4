"""Grafana Live refusing a browser's WebSocket for its Origin (a warning: dashboards still load)."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.grafana_live_origins import (
    ORIGIN_REFUSED,
    refused_origin,
    refused_origin_fix,
)
from stackctl.diagnosis.signature import ADVISORY, Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity


def _origin_refused(evidence: Evidence) -> Diagnosis:
    refused = refused_origin(evidence.line)
    if refused is None:
        raise ValueError("the refusal is not on this line")
    values = {"origin": refused.origin, "app_url": refused.app_url}
    return found(evidence, Cause.grafana_live_origin_refused,
                 f"Grafana Live refused a browser's WebSocket from {refused.origin or 'an origin'} that root_url "
                 f"({refused.app_url or 'appUrl'}) and [live] allowed_origins do not allow: live updates stop",
                 Fix(f"{refused_origin_fix(refused)}; then restart Grafana", env="GF_LIVE_ALLOWED_ORIGINS"),
                 severity=Severity.advisory, **{name: value for name, value in values.items() if value})


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.grafana_live_origin_refused, ORIGIN_REFUSED.pattern, _origin_refused, ADVISORY),
)
