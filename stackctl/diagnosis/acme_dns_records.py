"""The DNS-01 challenge answered by another TXT record than the one the order needs, read by its signature and by the
fallback alike.

For DNS-01 the certificate authority looks up TXT at _acme-challenge.NAME and compares what it finds with the token
of this order. "Incorrect TXT record "VALUE" found at _acme-challenge.NAME" says the name answered, with something
else than what certbot's plugin wrote, so another record answers for it: a wildcard CNAME (*.NAME) or a CNAME at
_acme-challenge that sends the lookup to another name's records (helgeerbe/certbot-dns-ionos#8: "Once the CNAME was
deleted, the challenge was passed"), a TXT record left from an earlier attempt, or a zone hosted elsewhere than where
the plugin writes. Two wordings of one cause point at the record to change: a TXT record whose value is a host name
(joohoi/acme-dns-certbot-joohoi#22: "hash.auth.acme-dns.io." found), which acme-dns wants as a CNAME to that name,
not a TXT holding it; and an order for NAME and *.NAME, whose two tokens must both be at _acme-challenge.NAME at once
(certbot/certbot#7679, where certbot's manual prompt says "This must be set up in addition to the previous
challenges": the second value replaced the first).

stackctl's own certbot answers the HTTP-01 challenge through its nginx (webroot), so this comes from a certbot run
with a DNS plugin or --manual: port 80 and the hostname's A record play no part in it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The CA's words, as certbot prints them on one line or wrapped over three (older certbots' IMPORTANT NOTES).
WRONG_TXT = re.compile(r"Incorrect TXT record(?:\s+\\?\"(?P<value>[^\"\\]*)\\?\"\s+found at\s+"
                       r"(?P<name>_acme-challenge\.[\w.-]*\w))?")
# A value that is a host name, not a token: a token is base64url (no dots).
_HOST_NAME = re.compile(r"^[\w-]+(?:\.[\w-]+)+\.?$")
# certbot's manual prompt for the second of two challenges at one name, and an order naming NAME and *.NAME.
_TWO_TOKENS = re.compile(r"in addition to the previous challenges|multiple distinct TXT records with the same name"
                         r"|-d \*\.|\bDomain: \*\.")


@dataclass(frozen=True)
class WrongRecord:
    value: str  # the TXT value the CA found ("" where the line does not say)
    name: str  # _acme-challenge.NAME ("" where the line does not say)
    host_name: bool  # the value is a host name: a CNAME's target written as TXT
    two_tokens: bool  # the order has two challenges at one name (NAME and *.NAME)


def wrong_record(text: str, log: str = "") -> WrongRecord | None:
    """The CA's refusal of the TXT record it found, read from `text` (a line, joined with the ones it wraps onto);
    `log`: the rest of the run, where an order for two challenges at one name shows."""
    match = WRONG_TXT.search(text)
    if match is None:
        return None
    value = (match["value"] or "").strip("*")
    return WrongRecord(value, match["name"] or "", bool(_HOST_NAME.match(value)),
                       bool(_TWO_TOKENS.search(f"{log}\n{text}")))


def wrong_record_fix(record: WrongRecord) -> str:
    name = record.name or "_acme-challenge.NAME"
    lead = ""
    if record.host_name:
        lead = (f"The value found, {record.value}, is a host name, not a token: the record was meant as a CNAME to "
                f"it (acme-dns and other delegations: `{name}` as a CNAME pointing to {record.value}, not a TXT record "
                "holding that name); remove the TXT record and create the CNAME. ")
    elif record.two_tokens:
        lead = (f"This order has two challenges at {name} (NAME and *.NAME in one certificate): both TXT values must "
                "be there at once, so add the second value beside the first instead of replacing it, and wait until "
                f"`dig +short TXT {name}` lists both before continuing. ")
    return (f"{lead}Let's Encrypt found a TXT record at {name} other than the one this order's DNS-01 challenge needs, "
            f"so another record answers for that name: `dig +short TXT {name}` and `dig +short CNAME {name}`, asked of "
            "the zone's authoritative servers (`dig NS` of the domain names them), show what it gets. A CNAME there, "
            "or a wildcard CNAME (*.NAME) covering it, sends the lookup to another name's records, which the plugin "
            "never wrote: remove the CNAME (or the wildcard one), or point it at the name where the plugin writes its "
            "TXT record; a TXT record left from an earlier attempt answers instead of (or beside) the new one: remove "
            "the stale records (or, where the new one has not reached every authoritative server yet, wait longer: "
            "the plugin's --dns-PLUGIN-propagation-seconds); a zone hosted at another provider than the plugin's (the NS records name it) is never "
            "read where the plugin writes: use that provider's plugin. This is the DNS challenge: port 80 and the "
            "hostname's A record play no part in it, and stackctl's own certbot answers the HTTP-01 challenge "
            "through its nginx, so this comes from a certbot run with a DNS plugin or --manual")
