"""A client that does not trust the certificate of the endpoint it calls: read by the
client-certificate-untrusted signature and by the fallback alike.

Node's TLS names the chain it could not verify by code (SELF_SIGNED_CERT_IN_CHAIN, DEPTH_ZERO_SELF_SIGNED_CERT,
UNABLE_TO_VERIFY_LEAF_SIGNATURE, UNABLE_TO_GET_ISSUER_CERT_LOCALLY, or their messages: "self-signed
certificate in certificate chain", "unable to get local issuer certificate", "unable to verify the first
certificate"); Claude Code says "Self-signed certificate detected"; Python's ssl says
CERTIFICATE_VERIFY_FAILED. The certificate is signed by a CA the client's own store lacks: a corporate
TLS-inspecting proxy's (Zscaler, Netskope, Palo Alto) or an internal one. Node reads extra CAs from
NODE_EXTRA_CA_CERTS when it starts; Python's ssl from SSL_CERT_FILE, requests from REQUESTS_CA_BUNDLE.
Turning verification off (NODE_TLS_REJECT_UNAUTHORIZED=0) is never the fix.
"""

from __future__ import annotations

import re

UNTRUSTED = re.compile(
    r"\b(?:SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|UNABLE_TO_VERIFY_LEAF_SIGNATURE"
    r"|UNABLE_TO_GET_ISSUER_CERT(?:_LOCALLY)?|CERTIFICATE_VERIFY_FAILED)\b"
    r"|self[- ]signed certificate in certificate chain|unable to get (?:local )?issuer certificate"
    r"|unable to verify the first certificate|Self-signed certificate detected", re.IGNORECASE)
_PYTHON = re.compile(r"CERTIFICATE_VERIFY_FAILED|\[SSL[:\]]|SSLError|SSLCertVerificationError")


def untrusted_client(text: str) -> str | None:
    """"python" or "node" where `text` is a client's refusal of an endpoint's certificate chain, else None."""
    if not UNTRUSTED.search(text):
        return None
    return "python" if _PYTHON.search(text) else "node"


def certificate_variable(client: str) -> str:
    return "SSL_CERT_FILE" if client == "python" else "NODE_EXTRA_CA_CERTS"


def untrusted_fix(client: str) -> str:
    trust = ("set SSL_CERT_FILE=/path/to/ca-bundle.pem (REQUESTS_CA_BUNDLE for clients built on requests) in the "
             "environment the client starts from, to a bundle that holds that CA certificate: the system's "
             "/etc/ssl/certs/ca-certificates.crt once the CA is installed there (copy it to "
             "/usr/local/share/ca-certificates/NAME.crt, `sudo update-ca-certificates`), or a copy of certifi's bundle "
             "(`python -m certifi` prints its path) with the CA appended"
             ) if client == "python" else (
             "set NODE_EXTRA_CA_CERTS=/path/to/ca.pem (that CA certificate, PEM) in the environment the client starts "
             "from: exported in the shell before `claude`, `codex` or `opencode` runs (for Claude Code also the `env` "
             "block of ~/.claude/settings.json; a client started from an IDE or a desktop app inherits that app's "
             "environment, not the shell's); Node reads it once, at start, so start the client again")
    return ("the client does not trust the certificate of the endpoint it connects to: it is signed by a CA its own "
            "certificate store lacks, most often a corporate proxy that inspects TLS (Zscaler, Netskope, Palo Alto) "
            "or an internal CA. Get that CA's certificate (your IT department's root certificate, or the last "
            "issuer `openssl s_client -connect HOST:443 -showcerts` prints) and " + trust + ". Never turn "
            "verification off (NODE_TLS_REJECT_UNAUTHORIZED=0, verify=False). stackctl makes no CA of its own: "
            "`stackctl tls issue` gets the stack's certificate from Let's Encrypt, which clients trust already; one "
            "issued with --staging, or from a private ACME server (--acme-server), is signed by a CA they do not: "
            "issue it again without --staging, or trust that CA's root as above (nginx serves the chain in "
            "LETSENCRYPT_DIR/live/HOSTNAME/fullchain.pem, letsencrypt_dir and hostname in stack.yaml). A client "
            "pointed at the stack's plain http:// LAN address makes no TLS connection to it: a refusal naming another "
            "host (api.anthropic.com for Claude Code's own checks at start) is that host's chain, rewritten by the "
            "proxy, and takes the same fix")
