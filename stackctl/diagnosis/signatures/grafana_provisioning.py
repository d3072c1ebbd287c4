"""A Grafana provisioning file that is not one of its kind (a dashboard's JSON where a provider file belongs)."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.grafana_provisioning_files import (
    NOT_PROVISIONING,
    not_provisioning,
    not_provisioning_fix,
)
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _not_provisioning(evidence: Evidence) -> Diagnosis:
    match = not_provisioning(evidence.text)
    if match is None:
        raise ValueError("the refusal is not on this line")
    file = match["file"] or ""
    return found(evidence, Cause.grafana_provisioning_not_provisioning,
                 f"Grafana cannot read {file or 'a file'} in provisioning/{match['kind']}/ as a provisioning file "
                 f"(a YAML {match['got']} where its format wants another), so it does not start",
                 Fix(not_provisioning_fix(match)), kind=match["kind"], **({"file": file} if file else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.grafana_provisioning_not_provisioning, unnamed(NOT_PROVISIONING), _not_provisioning),
)
