"""A Grafana plugin Grafana does not load because it has no signature."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.grafana_signatures import UNSIGNED, unsigned_fix, unsigned_plugin
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix

_ALLOW = "GF_PLUGINS_ALLOW_LOADING_UNSIGNED_PLUGINS"


def _unsigned(evidence: Evidence) -> Diagnosis:
    plugin = unsigned_plugin(evidence.text) or ""
    return found(evidence, Cause.grafana_plugin_unsigned,
                 f"Grafana does not load the plugin {plugin or '(unnamed)'}: it has no signature",
                 Fix(unsigned_fix(plugin), env=_ALLOW, value=plugin or None), **({"plugin": plugin} if plugin else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.grafana_plugin_unsigned, unnamed(UNSIGNED), _unsigned),
)
