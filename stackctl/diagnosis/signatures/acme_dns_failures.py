"""The ACME server's resolver getting SERVFAIL from a domain's own DNS: broken DNSSEC at the registrar, or name
servers that do not answer for the zone."""

from __future__ import annotations

from stackctl.diagnosis.acme_dns_failures import SERVFAIL, servfail, servfail_domain, servfail_fix
from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import ROOT_CAUSE, Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _certbot_dns_servfail(evidence: Evidence) -> Diagnosis:
    match = servfail(evidence.text)
    if match is None:
        raise ValueError("no SERVFAIL on this line")
    domain, record = servfail_domain(match), match["type"].upper()
    return found(evidence, Cause.certbot_dns_servfail,
                 f"Let's Encrypt could not look up the {record} record of {match['domain']}: the domain's name servers "
                 "answered SERVFAIL (broken DNSSEC, or name servers that do not answer for the zone), so the "
                 "certificate was not issued",
                 Fix(servfail_fix(record, match["domain"])), domain=domain, record=record)


SIGNATURES: tuple[Signature, ...] = (
    # Heavier than a placeholder domain (setup_files): a placeholder gets NXDOMAIN, so a SERVFAIL for example.com is a
    # real domain its reporter redacted.
    signature(Cause.certbot_dns_servfail, unnamed(SERVFAIL), _certbot_dns_servfail, ROOT_CAUSE + 2),
)
