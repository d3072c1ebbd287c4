"""The ACME server's resolver getting SERVFAIL from a domain's own DNS: read by the certbot-dns-servfail signature
and by the fallback alike.

"DNS problem: SERVFAIL looking up TXT for _acme-challenge.NAME - the domain's nameservers may be malfunctioning"
(certbot and every ACME client quoting Let's Encrypt; A, AAAA and CAA lookups are worded the same): Let's Encrypt's
validating resolver asked the domain's authoritative name servers and got no answer it could use. Most often DNSSEC
is broken: the registrar still publishes a DS record for keys the zone is no longer signed with (DNS moved to another
provider, signing turned off there), so every validating resolver fails the whole zone (virtualmin-gpl#418: the
DNSSEC records at the registrar); else the name servers the registrar delegates to do not answer for the zone
(jed/certbot-route53#4: a domain whose registered name servers were not the hosted zone's). A resolver near the user
may still answer from its cache, or without validating.

NXDOMAIN is another answer (no such name: acme_dns). A placeholder such as example.com gets NXDOMAIN, never SERVFAIL,
so a SERVFAIL for example.com is a real domain its reporter redacted, not a template's placeholder.
"""

from __future__ import annotations

import re

SERVFAIL = re.compile(r"DNS problem ?: SERVFAIL looking up (?P<type>A|AAAA|CAA|TXT) for (?P<domain>[\w*.-]*\w)",
                      re.IGNORECASE)
_CHALLENGE_LABEL = "_acme-challenge."


def servfail(text: str) -> re.Match[str] | None:
    """The ACME server's SERVFAIL for a domain's record, or None."""
    return SERVFAIL.search(text)


def servfail_domain(match: re.Match[str]) -> str:
    """The domain whose DNS failed: the name looked up, without the dns-01 challenge's label."""
    return match["domain"].removeprefix(_CHALLENGE_LABEL)


def servfail_fix(record_type: str, name: str) -> str:
    domain = name.removeprefix(_CHALLENGE_LABEL)
    caa = (" A provider that answers CAA queries with an error (NOTIMP, REFUSED) instead of an empty NOERROR fails "
           "the same way: ask it to fix that." if record_type.upper() == "CAA" else "")
    return (f"Let's Encrypt's resolver got SERVFAIL from the authoritative DNS of {domain} looking up {record_type} for "
            f"{name}: the domain's own DNS is broken, not this host or certbot. Most often DNSSEC: a DS record at the "
            "registrar for keys the zone is no longer signed with (left after moving DNS to another provider, or after "
            "turning signing off there), which makes every validating resolver fail the whole zone; else the name "
            "servers the registrar delegates to (its NS records) do not answer for the zone. Check with `dig +dnssec "
            f"{record_type} {name}`: SERVFAIL there while `dig +cd {record_type} {name}` (checking disabled) answers "
            f"means DNSSEC; https://dnsviz.net/d/{domain}/dnssec/ shows the broken link, and unboundtest.com resolves "
            f"as Let's Encrypt does; `dig NS {domain}` against the registrar's delegation shows the name servers. Fix "
            "the DS record at the registrar (publish the DS of the key the zone is signed with now, or remove it and "
            "turn DNSSEC off), or make the registrar's NS records name the servers that host the zone; wait for the "
            f"old DS record's TTL, then run certbot again (`stackctl tls issue` for stackctl's own certificate).{caa}")
