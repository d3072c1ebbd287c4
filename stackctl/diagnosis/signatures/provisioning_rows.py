"""A provisioned Grafana dashboard whose dashboard_provisioning row points at a dashboard Grafana no longer has."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.grafana_provisioning_rows import (
    STALE_ROW,
    provider_named,
    provisioned_file,
    stale_row,
    stale_row_fix,
)
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity


def _stale_row(evidence: Evidence) -> Diagnosis:
    match = stale_row(evidence.line)
    if match is None:
        raise ValueError("the refusal is not on this line")
    file = provisioned_file(evidence.lines, evidence.index)
    provider = provider_named(evidence.line)
    return found(evidence, Cause.grafana_provisioning_stale_row,
                 f"Grafana could not {match['action']} the provisioned dashboard {file or match['id'] or ''}: its "
                 "dashboard_provisioning row points at a dashboard that is gone",
                 Fix(stale_row_fix(match, file, provider)), severity=Severity.advisory,
                 **({"file": file} if file else {}), **({"provider": provider} if provider else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.grafana_provisioning_stale_row, unnamed(STALE_ROW), _stale_row),
)
