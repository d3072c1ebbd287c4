"""The ACME server finding no address for a domain it was asked to validate: read by the
certbot-dns-no-address signature and by the fallback alike. Apart from NXDOMAIN (certbot_dns_missing:
no record at all), read the same way: "DNS problem: NXDOMAIN looking up A for NAME" in certbot's and
acme.sh's words.

Let's Encrypt asks the domain's authoritative name servers itself, not a resolver near the user:
"Type: unknownHost" / "No valid IP addresses found for NAME" / "no valid A records found for NAME" means
they answered with no A or AAAA record it can use, or an answer it could not read (a truncated or
broken reply, a lame delegation: certbot#5433), while a cached resolver may still show the old address;
a CNAME to a name with no public address (certbot#7999) and a private address count the same.
"""

from __future__ import annotations

import re

NO_ADDRESS = re.compile(r"No valid IP addresses found for (?P<domain>[\w.-]+\w)"
                        r"|no valid A records found for (?P<a_domain>[\w.-]+\w)"
                        r"|Type:\s+unknownHost\b")


def no_address_domain(text: str) -> str:
    match = NO_ADDRESS.search(text)
    return (match["domain"] or match["a_domain"] or "") if match else ""


def no_address_fix(domain: str) -> str:
    name = domain or "NAME"
    return (f"Let's Encrypt asked the authoritative DNS servers of {name} and got no usable A/AAAA record (none, a "
            "private address, or a reply it could not read), even where your own resolver answers from its cache: "
            f"`dig +trace A {name}` (and AAAA) follows the delegation from the root to the authoritative name servers "
            f"and shows what they answer; `dig NS {name}` lists them. Put an A record (and AAAA, if any) with this "
            "host's public address at the DNS provider those NS records name (the registrar's delegation must point "
            "at that provider); if the authoritative name servers do not answer cleanly, fix them with the DNS "
            "provider or change DNS providers; a CNAME must end at a public address. Then `stackctl tls issue` "
            "again for hostname in stack.yaml")


# The ACME server's NXDOMAIN for the domain: no record of that name at all (a typo, or one not created yet).
NO_RECORD = re.compile(r"DNS problem ?: NXDOMAIN looking up (?:A|AAAA) for (?P<domain>[\w.-]+\w)", re.IGNORECASE)


def no_record_fix() -> str:
    return ("create a DNS record for hostname: an A record (and/or AAAA) pointing at this host's public "
            "address, at the DNS provider of the domain; wait for it to resolve (`dig +short NAME`: a new "
            "record takes minutes to propagate, and certbot sees NXDOMAIN until then), or fix a typo in "
            "hostname in stack.yaml")
