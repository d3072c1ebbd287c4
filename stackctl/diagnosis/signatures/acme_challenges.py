"""certbot's HTTP-01 challenge as the certificate authority reports it: the name has no DNS record,
the CA could not connect to or got a wrong answer from this host, or (certbot's hint alone, no
reason stated) the name does not point here yet or port 80 does not reach this host.

stackctl obtains certificates through its own nginx (webroot on ports.http), and Let's Encrypt
fetches a challenge from port 80 of the address the name resolves to: every fix is the hostname's
DNS record and the path from the internet to nginx."""

from __future__ import annotations

import re

from stackctl.diagnosis.acme_dns import NO_ADDRESS, no_address_domain, no_address_fix, no_record_fix
from stackctl.diagnosis.acme_front_proxies import front_named, front_proxy_fix
from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import CONSEQUENCE, Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix

_ACME_DOMAIN = re.compile(r"Domain: (?P<domain>\S+)|for domain (?P<challenge>\S+)"
                          r"|Failed authorization procedure\. ?(?P<procedure>[\w.-]+) \(http-01\)")
# certbot's hint after a failed challenge names the port its own server listened on (standalone),
# as `port N` or `ADDRESS:N`.
_STANDALONE_PORT = re.compile(r"webserver started by Certbot\s+on\s+(?:port\s+|\S+:)(?P<port>\d+)")


def _acme_domain(evidence: Evidence) -> str:
    return next(iter(evidence.all_found(_ACME_DOMAIN, "domain") or evidence.all_found(_ACME_DOMAIN, "challenge")
                     or evidence.all_found(_ACME_DOMAIN, "procedure")), "")


def _certbot_challenge_unreachable(evidence: Evidence) -> Diagnosis:
    domain = _acme_domain(evidence)
    return found(evidence, Cause.certbot_challenge_unreachable,
                 f"Let's Encrypt could not fetch the HTTP challenge for {domain or 'the hostname'} from this host",
                 Fix("the hostname in stack.yaml must resolve to this host's public address and port 80 must be "
                     "open to the internet (firewall, cloud security group, router forwarding) with nginx serving "
                     "it (ports.http); then `stackctl up` again", key="hostname"),
                 **({"domain": domain} if domain else {}))


# The CA's fetch answered: the URL it ended at (https:// after a redirect) and the status, where stated.
_ANSWERED = re.compile(r"Invalid response from (?P<url>https?://\S+?/\.well-known/acme-challenge/\S*?)"
                       r"(?: \[[^\]]+\])?(?::\s*(?P<status>\d{3})\b)?(?:[\s:\"]|$)")


def _certbot_challenge_wrong_answer(evidence: Evidence) -> Diagnosis:
    """The CA reached a web server for the name and it answered the challenge with something other than
    the token (a 404, a page, a redirect to where the token is not): port 80 is open, so the fault is
    which server answers and what it does with /.well-known/acme-challenge/. A CDN's 5xx (its origin out
    of reach) is read as unreachable."""
    values = evidence.read(_ANSWERED)
    url, status = values.get("url", ""), values.get("status", "")
    if status.startswith("5"):
        return _certbot_challenge_unreachable(evidence)
    domain = _acme_domain(evidence)
    redirected = "; the fetch ended at https://, where a redirect took it" if url.startswith("https://") else ""
    # A cache or CDN whose own page the CA quotes answered in nginx's place (acme_front_proxies): it leads.
    front = front_named(evidence.text)
    nginx = ("the port-80 server for hostname must serve /.well-known/acme-challenge/ from certbot's webroot "
             "before any redirect: stackctl's rendered site does (its `location /.well-known/acme-challenge/` "
             "comes before `location / { return 301 https://... }`), but a server-level `return 301` or "
             "`rewrite` in another server block for the same name (the distribution's default site, a "
             "site of your own) catches it first when nginx redirects the whole server; remove that block or "
             "exempt the challenge path from the redirect (`sudo nginx -T` shows every server block; `curl -I "
             "http://NAME/.well-known/acme-challenge/x` from outside shows where it goes)")
    text = (f"{front_proxy_fix(front)}. Where nginx itself answers port 80, {nginx}" if front else
            f"{nginx}. Where {front_proxy_fix(None)}. A page that is not your nginx's (a parking page) may also mean "
            "hostname's DNS record points elsewhere")
    return found(evidence, Cause.certbot_challenge_wrong_answer,
                 f"Let's Encrypt reached a web server for {domain or 'the hostname'} but it did not answer the HTTP "
                 f"challenge with certbot's token{' (HTTP ' + status + ')' if status else ''}: the challenge path is "
                 f"redirected or served from elsewhere{redirected}"
                 + (f" ({front} answered)" if front else ""),
                 Fix(f"{text}; then `stackctl up` again", key="hostname"),
                 **({"domain": domain} if domain else {}), **({"status": int(status)} if status else {}),
                 **({"front": front} if front else {}))


def _certbot_challenge_not_this_host(evidence: Evidence) -> Diagnosis:
    """certbot's hint when the CA reported no reason the log kept (a timeout, a wrong answer and
    NXDOMAIN are read by their own signatures): the two things it asks to check, in stackctl's terms."""
    domain = _acme_domain(evidence)
    port = evidence.read(_STANDALONE_PORT).get("port", "")
    elsewhere = (f"; certbot's own server listened on port {port} here, so port 80 must be forwarded to {port}"
                 if port and port != "80" else "")
    return found(evidence, Cause.certbot_challenge_not_this_host,
                 f"Let's Encrypt could not fetch the HTTP challenge for {domain or 'the hostname'}: the name does not "
                 "point to this host (yet), or port 80 does not reach it from the internet",
                 Fix("check the DNS record first: the A record (and the AAAA record, if there is one: Let's Encrypt "
                     "prefers IPv6) of hostname in stack.yaml must hold this host's public address (`dig +short A "
                     "NAME @1.1.1.1`, `dig +short AAAA NAME @1.1.1.1`); a new or changed record takes minutes, up to "
                     "the old record's TTL, to reach every resolver (DNS propagation), and a leftover AAAA record "
                     "pointing elsewhere fails the challenge even when A is right. Then port 80 must be reachable "
                     "from the internet (firewall, cloud security group, the router forwarding 80 to this host): "
                     "the CA connects to port 80 only, where stackctl's nginx answers the challenge on ports.http"
                     f"{elsewhere}. `stackctl doctor` checks that ports.http is free on this host, not what the "
                     "internet sees; then `stackctl up`", key="hostname"),
                 **({"domain": domain} if domain else {}), **({"port": int(port)} if port else {}))


def _certbot_dns_missing(evidence: Evidence) -> Diagnosis:
    domain = evidence.read(re.compile(r"NXDOMAIN looking up (?:A|AAAA) for (?P<domain>[\w.-]+\w)")).get("domain", "")
    return found(evidence, Cause.certbot_dns_missing,
                 f"{domain or 'the hostname'} has no DNS record, so Let's Encrypt cannot validate it",
                 Fix(f"{no_record_fix()}; then `stackctl up`", key="hostname"), **({"domain": domain} if domain else {}))



def _certbot_dns_no_address(evidence: Evidence) -> Diagnosis:
    domain = no_address_domain("\n".join(evidence.lines)) or _acme_domain(evidence)
    return found(evidence, Cause.certbot_dns_no_address,
                 f"Let's Encrypt found no usable address for {domain or 'the hostname'}: the domain's authoritative "
                 "DNS servers gave it no A/AAAA record it could use",
                 Fix(no_address_fix(domain), key="hostname"), **({"domain": domain} if domain else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.certbot_challenge_unreachable,
              r"Timeout during connect"
              r"|Connection refused.*acme-challenge|The server could not connect to the client to verify the domain",
              _certbot_challenge_unreachable),
    signature(Cause.certbot_challenge_wrong_answer, r"Invalid response from https?://\S+/\.well-known/acme-challenge",
              _certbot_challenge_wrong_answer),
    signature(Cause.certbot_challenge_unreachable, r"Certbot failed to authenticate some domains|Some challenges have "
              r"failed", _certbot_challenge_unreachable, CONSEQUENCE),
    # The hint (standalone's and the nginx or Apache plugin's wording), read even where a terminal
    # cut it: it says more than "Some challenges have failed", which follows it, and less than the
    # reason the CA gave, which comes before it.
    signature(Cause.certbot_challenge_not_this_host,
              r"failed to download the challenge files from|listed domains point to this (?:machine|nginx server"
              r"|apache server)", _certbot_challenge_not_this_host, CONSEQUENCE + 1),
    signature(Cause.certbot_dns_no_address, unnamed(NO_ADDRESS), _certbot_dns_no_address),
    signature(Cause.certbot_dns_missing, r"DNS problem: NXDOMAIN looking up (?:A|AAAA) for", _certbot_dns_missing),
)
