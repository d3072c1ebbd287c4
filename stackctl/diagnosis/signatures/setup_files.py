"""A setup copied from a template and not finished: a placeholder domain or contact address left in
for certbot, a second datasource also marked default in Grafana's provisioning, and an nginx
configuration that an nginx-certbot image disabled because the certificates it names never came."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import ROOT_CAUSE, Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix

# Names reserved for documentation and tests (RFC 2606, RFC 6761): no public DNS, no CA issues for them.
_RESERVED = (r"(?:[\w-]+\.)*(?:example\.(?:com|net|org)|[\w-]+\.(?:example|test|invalid|localhost))"
             r"|localhost")
_NAMED = re.compile(r"(?:looking up (?:A|AAAA|CAA|TXT) for|Cannot issue for|forbidden domain|certificate for)"
                    rf" \"?(?P<domain>{_RESERVED})\b", re.IGNORECASE)
_CONTACT = re.compile(rf"contact email has forbidden domain \"?(?P<domain>{_RESERVED})", re.IGNORECASE)


def _certbot_placeholder_domain(evidence: Evidence) -> Diagnosis:
    """A domain (or contact address) a template or guide left as is: the CA refuses it, or finds no
    DNS for it, whatever else is right. Told apart from a real domain without a record by its name."""
    contact = evidence.read(_CONTACT).get("domain")
    if contact:
        return found(evidence, Cause.certbot_placeholder_domain,
                     f"certbot's contact address is at {contact}, a domain reserved for examples: the CA refuses "
                     "to register it",
                     Fix(f"give certbot a real e-mail address, not one at {contact}: `stackctl tls issue --email "
                         "YOU@YOUR-DOMAIN` (the CA sends expiry notices there); a template's CERTBOT_EMAIL or "
                         "--email left at its example value must be replaced the same way"), domain=contact)
    domains = evidence.all_found(_NAMED, "domain")
    domain = domains[0] if domains else ""
    return found(evidence, Cause.certbot_placeholder_domain,
                 f"certbot asked for a certificate for {domain or 'a name'} that is a placeholder or not on the "
                 "public internet: no CA issues one for it",
                 Fix(f"replace the placeholder domain{f' {domain}' if domain else ''} with your real domain: set "
                     "hostname in stack.yaml to your domain name, one whose A record points at this host (`dig +short "
                     "NAME`); example.com/.net/.org and the .example, .test, .invalid and .localhost names (and a "
                     "bare localhost) are reserved for examples and never resolve publicly. A template's or guide's "
                     "own files (a docker-compose.yml, an init script, a server_name) carry the example too. Then "
                     "`stackctl up` and `stackctl tls issue`", key="hostname"),
                 **({"domain": domain} if domain else {}))


# Grafana 5.3 (grafana#12921) counts one default per organisation; before it, one in the whole file.
_ONE_DEFAULT = re.compile(r"Only one datasource (?P<per_org>per organi[sz]ation )?can be marked as default")


def _grafana_default_datasource_conflict(evidence: Evidence) -> Diagnosis:
    per_org = "per_org" in evidence.read(_ONE_DEFAULT)
    older = ("" if per_org else
             " This Grafana (before 5.3) allows one default in the whole provisioning, not one default per "
             "organisation: with datasources for several orgIds, upgrade Grafana (set images.grafana to a newer "
             "grafana; stackctl's default is grafana/grafana-oss:12.2.0)")
    return found(evidence, Cause.grafana_default_datasource_conflict,
                 "Grafana refuses its datasource provisioning: more than one datasource of one organisation is "
                 "marked as default, so it does not start",
                 Fix("mark only one default datasource per organisation: every file under provisioning/datasources "
                     "counts (stackctl's own, rendered/grafana/provisioning/datasources, provisions one default "
                     "Prometheus), so set isDefault: false on the others, or remove a file added beside it; a Helm "
                     "chart that provisions its own default datasource (kube-prometheus-stack's sidecar) needs its "
                     f"default turned off too. Then `stackctl up`.{older}",
                     key=None if per_org else "images.grafana"))


_DISABLED = re.compile(r"Important file\(s\) for '(?P<conf>[^']+)' are missing(?: or empty)?, disabling")
_MISSING_CERT = re.compile(r"Could not find (?:non-zero size )?\w+ file '(?P<path>[^';]+);?' in")


def _nginx_config_disabled_missing_certs(evidence: Evidence) -> Diagnosis:
    """jonasal/nginx-certbot's entrypoint disables every .conf whose certificates do not exist yet
    (nginx would not start), then asks certbot for them: the file's port 80 block goes with it."""
    conf = evidence.read(_DISABLED).get("conf", "the configuration file")
    paths = evidence.all_found(_MISSING_CERT, "path")
    named = f" ({', '.join(paths)})" if paths else ""
    return found(evidence, Cause.nginx_config_disabled_missing_certs,
                 f"the nginx-certbot image disabled {conf}: the certificate files it names{named} do not exist yet, "
                 "and until they do nothing in that file is served",
                 Fix(f"keep only the HTTPS server block in {conf}: the image disables the whole file until its "
                     "certificates exist, so a port 80 server block in the same file goes too, and with it the "
                     "ACME challenge certbot needs. The image's own redirector.conf serves port 80 and the challenge: "
                     "let it, remove the duplicated port 80 server block (or move it to a separate file), and name the "
                     "certificates /etc/letsencrypt/live/NAME/{fullchain,privkey,chain}.pem, whose NAME the image "
                     "requests. If certbot still fails, its lines after this one say why (DNS, port 80 reachable). "
                     "stackctl's own nginx needs none of this: it adds the HTTPS server block once `stackctl tls "
                     "issue` has the certificate"), conf=conf)


SIGNATURES: tuple[Signature, ...] = (
    # Heavier than a missing DNS record (certbot's NXDOMAIN line): a placeholder name is why it has none.
    signature(Cause.certbot_placeholder_domain,
              rf"(?:looking up (?:A|AAAA|CAA|TXT) for|Cannot issue for|forbidden domain) \"?(?:{_RESERVED})\b"
              r"|Domain name does not end with a valid public suffix|DNS name does not have enough labels",
              _certbot_placeholder_domain, ROOT_CAUSE + 1),
    signature(Cause.grafana_default_datasource_conflict, _ONE_DEFAULT.pattern, _grafana_default_datasource_conflict),
    signature(Cause.nginx_config_disabled_missing_certs, _DISABLED.pattern, _nginx_config_disabled_missing_certs),
)
