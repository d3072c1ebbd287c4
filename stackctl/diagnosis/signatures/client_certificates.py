"""A client that does not trust the endpoint's certificate chain (client_certificates): Node's codes
and messages, Claude Code's "Self-signed certificate detected", Python's CERTIFICATE_VERIFY_FAILED."""

from __future__ import annotations

from stackctl.diagnosis.client_certificates import (
    UNTRUSTED,
    certificate_variable,
    untrusted_client,
    untrusted_fix,
)
from stackctl.diagnosis.client_names import NAME_MISMATCH, mismatched_target, name_mismatch_fix
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


def _client_certificate_name_mismatch(evidence: Evidence) -> Diagnosis:
    target = mismatched_target(evidence.text) or ""
    named = f" ({target})" if target else ""
    return found(evidence, Cause.client_certificate_name_mismatch,
                 f"the client refused the endpoint's TLS certificate: it does not name the host or IP address the client "
                 f"connected to{named} in its subjectAltName", Fix(name_mismatch_fix(target), key="hostname"),
                 **({"target": target} if target else {}))


SIGNATURES: tuple[Signature, ...] = (
    # First: Python's "CERTIFICATE_VERIFY_FAILED ... Hostname mismatch" is a name, not an untrusted chain.
    signature(Cause.client_certificate_name_mismatch, NAME_MISMATCH.pattern, _client_certificate_name_mismatch),
    signature(Cause.client_certificate_untrusted, UNTRUSTED.pattern, _client_certificate_untrusted),
)
