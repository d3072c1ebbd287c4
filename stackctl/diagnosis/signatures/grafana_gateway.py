"""Grafana's Bad Gateway for a datasource: its server cannot reach the datasource URL."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.grafana_gateway import BAD_GATEWAY, bad_gateway_fix
from stackctl.diagnosis.signature import Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity

_PROMETHEUS_PORT = 9090


def _bad_gateway(evidence: Evidence) -> Diagnosis:
    keys = evidence.context.port_keys
    port = next((port for port, key in keys.items() if key == "ports.prometheus"), _PROMETHEUS_PORT)
    return found(evidence, Cause.grafana_datasource_unreachable,
                 "Grafana answered Bad Gateway for its datasource: its server could not reach the datasource URL, so "
                 "the dashboards have no data", Fix(bad_gateway_fix("ports.prometheus", port), key="ports.prometheus"),
                 severity=Severity.advisory)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.grafana_datasource_unreachable, BAD_GATEWAY.pattern, _bad_gateway),
)
