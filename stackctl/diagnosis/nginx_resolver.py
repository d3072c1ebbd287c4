"""nginx's `resolver` directive naming something that is not a DNS server's address: read by the
nginx-resolver-invalid signature and by the fallback alike.

`resolver` takes addresses; nginx looks any other word up as a host when it reads the configuration,
and 'host not found in resolver "X"' stops it. X is a template placeholder left unreplaced (RESOLVER,
${...}), a name where the address belongs, stray text a generator wrote (a line break, a comment), or
on an nginx built without IPv6, the `ipv6=off` parameter.
"""

from __future__ import annotations

import re

RESOLVER_NOT_FOUND = re.compile(r"host not found in resolver \"(?P<value>[^\"]*)(?P<closed>\")?")
_PLACEHOLDER = re.compile(r"^\$|^\{|^[A-Z][A-Z0-9_]+$|%\w+%")


def resolver_value(line: str) -> str | None:
    """The value nginx looked up, with the line break it held where the quote closes on the next line."""
    match = RESOLVER_NOT_FOUND.search(line)
    if match is None:
        return None
    return match["value"] if match["closed"] else match["value"] + "\n"


def resolver_fix(value: str) -> str:
    shown = value.strip() or value
    if _PLACEHOLDER.search(shown):
        why = (f"\"{shown}\" is a template placeholder left unreplaced: the step that fills it (envsubst, the image's "
               "entrypoint script) did not run or found its variable empty: set that variable, or write the address")
    elif shown == "ipv6=off":
        why = ("this nginx was built without IPv6, so it reads the ipv6=off parameter as a host: remove ipv6=off from the "
               "resolver line")
    elif shown != value or re.search(r"\s|#", value):
        written = value.replace("\n", "\\n")
        why = f"the value holds stray text (\"{written}\": a line break, a comment or a space a generator wrote): remove it"
    else:
        why = f"\"{shown}\" is a name, not an address"
    return (f"nginx's resolver directive takes the IP address of a DNS server, and nginx could not look up the host "
            f"\"{shown}\" it names instead: {why}. Use the resolver address this nginx can reach: `resolver 127.0.0.11 "
            "valid=10s;` inside Docker's Compose networks (Docker's own DNS), else a nameserver address from the host's "
            "/etc/resolv.conf; then `nginx -t`. stackctl's own nginx.conf "
            "sets no resolver: its upstream is an address")
