"""grafana-cli's refusal of a plugin in GF_INSTALL_PLUGINS that grafana.com does not have for this Grafana."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.grafana_plugin_catalogue import (
    NOT_IN_CATALOGUE,
    not_in_catalogue,
    not_in_catalogue_fix,
)
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _not_in_catalogue(evidence: Evidence) -> Diagnosis:
    match = not_in_catalogue(evidence.text)
    if match is None:
        raise ValueError("the refusal is not on this line")
    version = match["version"]
    return found(evidence, Cause.grafana_plugin_install_failed,
                 f"grafana-cli found no plugin of the install list in grafana.com's catalogue for "
                 f"{'Grafana v' + version if version else 'this Grafana'}, and the container exits before Grafana "
                 "starts", Fix(not_in_catalogue_fix(version), env="GF_INSTALL_PLUGINS"),
                 **({"grafana": version} if version else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.grafana_plugin_install_failed, unnamed(NOT_IN_CATALOGUE), _not_in_catalogue),
)
