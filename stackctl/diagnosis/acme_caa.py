"""A domain's CAA records refusing the certificate authority: read by the certbot-caa-refused signature and by
the fallback alike.

"CAA record for X prevents issuance" (Boulder's words, type caa, HTTP 403): the domain, or a parent the lookup
climbed to, publishes CAA records and none lets this CA issue: the `issue` (and for a wildcard `issuewild`)
records must name letsencrypt.org, bare and without quotes of their own (YunoHost#1247: `'letsencrypt.org'`
inside the quotes), and a record with `accounturi=` only the ACME account it names (dstack-examples#109);
certbot#4827 and acme.sh#1611 were told to add the record the CA needs. CAA is read from public DNS, so
nothing on this host changes it.
"""

from __future__ import annotations

import re

CAA_REFUSED = re.compile(r"CAA record for (?P<domain>\S+?)\.? prevents issuance")


def caa_domain(text: str) -> str | None:
    """The domain whose CAA records refused issuance, or None where `text` does not say so."""
    match = CAA_REFUSED.search(text)
    return match["domain"] if match else None


def caa_fix(domain: str) -> str:
    named = domain or "the domain stack.yaml's hostname names"
    return (f"{named}'s CAA records (or its parent's: the CA climbs to the nearest name that has them) do not allow "
            f"Let's Encrypt to issue: `dig CAA {domain or 'HOSTNAME'}` (and each parent) shows them; hostname in stack.yaml is the name certbot asks for. At the DNS provider add `0 issue "
            "\"letsencrypt.org\"` (bare letsencrypt.org, no quotes of its own; `issuewild` too for a wildcard), or "
            "remove the CAA records that name only other CAs; a record with accounturi= allows only the ACME account "
            "it names, so it must match the account certbot uses (`/etc/letsencrypt/accounts`, or letsencrypt_dir's) "
            "or drop the accounturi. Wait for the DNS TTL, then `stackctl up` (certbot tries again; --staging while "
            "testing keeps off the rate limit)")
