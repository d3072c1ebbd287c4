"""A client that does not trust the endpoint's certificate chain (client_certificates): Node's codes
and messages, Claude Code's "Self-signed certificate detected", Python's CERTIFICATE_VERIFY_FAILED."""

from __future__ import annotations

from stackctl.diagnosis.client_certificates import (
    UNTRUSTED,
    certificate_variable,
    untrusted_client,
    untrusted_fix,
)
from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _client_certificate_untrusted(evidence: Evidence) -> Diagnosis:
    client = untrusted_client(evidence.text) or "node"
    variable = certificate_variable(client)
    runtime = "Python" if client == "python" else "Node"
    return found(evidence, Cause.client_certificate_untrusted,
                 f"the client ({runtime}) refused the endpoint's TLS certificate: its chain ends in a CA the client "
                 "does not trust (a TLS-inspecting proxy's or an internal CA)",
                 Fix(untrusted_fix(client), env=variable), client=runtime)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.client_certificate_untrusted, UNTRUSTED.pattern, _client_certificate_untrusted),
)
