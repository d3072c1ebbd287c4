"""A client that refuses the endpoint's certificate because it does not name the host it connected to:
read by the client-certificate-name-mismatch signature and by the fallback alike.

Node says ERR_TLS_CERT_ALTNAME_INVALID ("Hostname/IP does not match certificate's altnames: IP: 10.0.1.6 is not in
the cert's list"); Python's ssl "certificate verify failed: IP address mismatch" or "Hostname mismatch,
certificate is not valid for 'X'"; Go's x509 "certificate is valid for A, not B" or "cannot validate
certificate for IP because it doesn't contain any IP SANs"; curl "no alternative certificate subject name
matches target host name". Clients check the subjectAltName (SAN) list only, not the CN: a client reaching the
box by its IP address, or by another name, gets this from a certificate issued for the hostname (MQTTX#573,
MQTTX#1456, MQTT-Explorer#598, requarks/wiki#1347, nodemailer#1315, tls-gen#52).
"""

from __future__ import annotations

import re

NAME_MISMATCH = re.compile(
    r"ERR_TLS_CERT_ALTNAME_INVALID|Hostname/IP (?:does not|doesn't) match certificate's altnames"
    r"|certificate verify failed: (?:IP address|Hostname) mismatch|x509: certificate is valid for .+?, not \S+"
    r"|x509: cannot validate certificate for \S+ because it doesn't contain any IP SANs"
    r"|no alternative certificate subject name matches target host name", re.IGNORECASE)
_TARGET = re.compile(r"(?:IP|Host): ?(?P<node>[^\s,]+?)\.? is not in the cert's|not valid for '(?P<python>[^']+)'"
                     r"|, not (?P<go>[^\s\"]+)|certificate for (?P<go_ip>\S+) because|target host name '(?P<curl>[^']+)'")
_IP = re.compile(r"^\[?[\d.:a-fA-F]+\]?$")


def mismatched_target(text: str) -> str | None:
    """The host or IP the client asked for where `text` names it, "" where it does not, None: no mismatch."""
    if not NAME_MISMATCH.search(text):
        return None
    match = _TARGET.search(text)
    return next((value for value in match.groupdict().values() if value), "") if match else ""


def name_mismatch_fix(target: str) -> str:
    named = f" ({target})" if target else ""
    by_ip = bool(target) and bool(_IP.match(target)) and any(char.isdigit() for char in target)
    how = ("an IP address" if by_ip else "a name") + named
    return (f"the client connected by {how} that the endpoint's certificate does not list in its subjectAltName "
            "(SAN); clients check the SAN list only, not the CN. Connect by a name the certificate was issued for: "
            "for stackctl's HTTPS endpoint the `hostname` in stack.yaml (https://HOSTNAME/, with a DNS record or an "
            "/etc/hosts line on the client pointing it at the box), not the box's IP address or another alias; or "
            "reissue the certificate with that name or IP address in subjectAltName (a private CA's: `-addext "
            "'subjectAltName=DNS:NAME,IP:ADDRESS'`; `stackctl tls issue` gets one for `hostname`). `openssl s_client "
            "-connect HOST:443 | openssl x509 -noout -ext subjectAltName` lists the names it holds. Never turn "
            "verification off (NODE_TLS_REJECT_UNAUTHORIZED=0, verify=False)")
