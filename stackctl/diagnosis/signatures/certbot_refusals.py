"""certbot refused before any challenge: a plugin the certbot that ran does not load (its options unrecognised, its
entry point skipped by an older certbot), and a domain's CAA records that do not allow Let's Encrypt."""

from __future__ import annotations

from stackctl.diagnosis.acme_caa import CAA_REFUSED, caa_domain, caa_fix
from stackctl.diagnosis.certbot_plugins import (
    ENTRY_POINT_SKIPPED,
    PLUGIN_ARGUMENTS,
    plugin_fix,
    plugin_not_loaded,
)
from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _plugin_not_loaded(evidence: Evidence) -> Diagnosis:
    plugin = plugin_not_loaded(evidence.text)
    if plugin is None:
        raise ValueError("no plugin named")
    summary = (f"certbot skipped the {plugin.plugin} plugin: it is written for a newer certbot"
               if plugin.kind == "entry point" else
               f"the certbot that ran does not load the {plugin.plugin} plugin, so it refuses its options")
    return found(evidence, Cause.certbot_plugin_not_loaded, summary, Fix(plugin_fix(plugin)), plugin=plugin.plugin,
                 kind=plugin.kind)


def _caa_refused(evidence: Evidence) -> Diagnosis:
    domain = caa_domain(evidence.text) or ""
    return found(evidence, Cause.certbot_caa_refused,
                 f"the CAA records of {domain or 'the domain'} do not allow Let's Encrypt to issue its certificate",
                 Fix(caa_fix(domain), key="hostname"), **({"domain": domain} if domain else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.certbot_plugin_not_loaded, unnamed(PLUGIN_ARGUMENTS), _plugin_not_loaded),
    signature(Cause.certbot_plugin_not_loaded, unnamed(ENTRY_POINT_SKIPPED), _plugin_not_loaded),
    signature(Cause.certbot_caa_refused, unnamed(CAA_REFUSED), _caa_refused),
)
