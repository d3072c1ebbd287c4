"""A provisioned Grafana dashboard whose datasource is a template variable provisioning does not resolve."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.grafana_datasource_variables import UNRESOLVED, unresolved, unresolved_fix
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity


def _unresolved(evidence: Evidence) -> Diagnosis:
    match = unresolved(evidence.text)
    if match is None:
        raise ValueError("the datasource is not on this line")
    variable = match["named"] or match["variable"]
    return found(evidence, Cause.grafana_datasource_variable_unresolved,
                 f"a provisioned dashboard names its datasource {variable}, a template variable provisioning does not "
                 "resolve: " + ("Grafana refused to save the dashboard" if match["alert"] else "its panels find no data"),
                 Fix(unresolved_fix(match)), severity=Severity.advisory, datasource=variable)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.grafana_datasource_variable_unresolved, unnamed(UNRESOLVED), _unresolved),
)
