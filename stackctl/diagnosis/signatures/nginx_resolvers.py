"""nginx's `resolver` naming something that is not a DNS server's address (nginx_resolver)."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.nginx_resolver import RESOLVER_NOT_FOUND, resolver_fix, resolver_value
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _nginx_resolver_invalid(evidence: Evidence) -> Diagnosis:
    value = resolver_value(evidence.line) or ""
    return found(evidence, Cause.nginx_resolver_invalid,
                 f"nginx cannot use its resolver directive's value \"{value.strip()}\" as a DNS server's address, so "
                 "nginx does not start", Fix(resolver_fix(value)), resolver=value.strip())


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.nginx_resolver_invalid, unnamed(RESOLVER_NOT_FOUND), _nginx_resolver_invalid),
)
