"""A file_sd_configs field (`files:`) written outside a file_sd_configs entry of prometheus.yml."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.prometheus_discovery_fields import (
    DISCOVERY_FIELD,
    discovery_field,
    discovery_field_fix,
)
from stackctl.diagnosis.signature import ROOT_CAUSE, Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _discovery_field_misplaced(evidence: Evidence) -> Diagnosis:
    refused = discovery_field(evidence.line)
    if refused is None:
        raise ValueError("no discovery field on this line")
    field, section = refused
    return found(evidence, Cause.prometheus_config_field_misplaced,
                 f"Prometheus refuses prometheus.yml: `{field}` belongs in a file_sd_configs entry, not where it "
                 "stands, so it does not start", Fix(discovery_field_fix(field, section)), field=field, section=section)


SIGNATURES: tuple[Signature, ...] = (
    # Heavier than the invalid configuration (prometheus_config), which reads the same line.
    signature(Cause.prometheus_config_field_misplaced, unnamed(DISCOVERY_FIELD), _discovery_field_misplaced,
              ROOT_CAUSE + 1),
)
