"""Docker refusing a registry's certificate (registry_certificates): a TLS-intercepting proxy's chain for a
public registry, or a private registry's self-signed or internal CA."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.registry_certificates import (
    UNTRUSTED_REGISTRY,
    registry_fix,
    untrusted_registry,
)
from stackctl.diagnosis.signature import Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _registry_certificate_untrusted(evidence: Evidence) -> Diagnosis:
    registry = untrusted_registry(evidence.text) or untrusted_registry(evidence.line)
    assert registry is not None  # the trigger matched
    what = ("a TLS-intercepting proxy's certificate in place of the public registry's" if registry.public
            else "the private registry's self-signed or internal certificate")
    return found(evidence, Cause.docker_registry_certificate_untrusted,
                 f"Docker refused the registry's TLS certificate ({what}): signed by a CA the host does not trust",
                 Fix(registry_fix(registry)), **({"registry": registry.host} if registry.host else {}),
                 signer="proxy" if registry.public else "registry")


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.docker_registry_certificate_untrusted, UNTRUSTED_REGISTRY.pattern, _registry_certificate_untrusted),
)
