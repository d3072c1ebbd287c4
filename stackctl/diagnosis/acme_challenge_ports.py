"""Which port certbot's standalone server binds, read from the challenge the log shows it performing.

The challenge type decides the port: http-01 binds port 80, the old tls-sni-01 port 443 (certbot's
TLSSNI01Server). A certificate first issued with tls-sni-01 keeps renewing with it, so a renewal fails to
bind 443 where a web server holds it even though port 80 is free, until the renewal asks for http-01:
`--preferred-challenges http`, kept for later renewals as `pref_challs = http-01,` in the certificate's
renewal configuration (certbot#6527: "It works after adding `pref_challs = http-01,` to the renewal conf";
certbot-zimbra#39 and certbot#3958 bind 443 the same way). Let's Encrypt retired tls-sni-01 in 2019, so
such a renewal must move to http-01 (or dns-01) in any case.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# certbot's "Performing the following challenges:" list, and the standalone server class in its traceback.
_TLS_SNI = re.compile(r"\btls-sni-01 challenge for\b|\bTLSSNI01Server\b|\(tls-sni-01\)")


def tls_sni_challenge(lines: Sequence[str]) -> bool:
    """The log shows certbot performing the retired tls-sni-01 challenge, the one that binds port 443."""
    return any(_TLS_SNI.search(line) for line in lines)


def tls_sni_fix() -> str:
    """Renew with http-01 instead, for now and for later renewals."""
    return ("certbot was performing the tls-sni-01 challenge, which binds port 443 (the challenge type decides the "
            "port: http-01 binds port 80), and Let's Encrypt no longer offers tls-sni-01 at all: renew with the "
            "http-01 challenge, `sudo certbot renew --preferred-challenges http`, and keep it for later renewals with "
            "`pref_challs = http-01,` under [renewalparams] in /etc/letsencrypt/renewal/NAME.conf (a renewal repeats "
            "the challenge the certificate was first issued with)")
