"""Docker refusing a registry's TLS certificate ("x509: certificate signed by unknown authority"): read
by the docker-registry-certificate-untrusted signature and by the fallback alike.

dockerd verifies a registry's chain against the host's CA store (read when it starts) and
/etc/docker/certs.d/HOST[:PORT]/ca.crt. Two causes, told apart by the registry:

- a public registry (Docker Hub and its blob hosts, nvcr.io, ghcr.io, quay.io, ...): its real chain is
  trusted everywhere, so what dockerd sees is another one, a TLS-intercepting proxy's (a corporate
  proxy, Zscaler, an antivirus, a debugging proxy), signed by that proxy's own CA (moby#20912,
  moby#36820, docker/for-win#23, hello-world#86, whistle#846, docker-registry#1039);
- a private registry: its own certificate is self-signed or from an internal CA (moby#25587,
  distribution#1731, docker-registry#1008): that CA in /etc/docker/certs.d/HOST:PORT/ca.crt.

Apart from a client of stackctl's endpoint that does not trust its certificate (client_certificates:
Node's and Python's words, not Go's x509), and never `insecure-registries` for a public registry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Go's words (older and newer): dockerd's pull, login or search refused the chain it was shown.
_UNKNOWN_AUTHORITY = r"x509: certificate signed by unknown authority|x509: certificate is not trusted"
# Where the line says it is a registry's: a registry API path, or Docker's words around a pull.
_REGISTRY_CONTEXT = (r"https?://[\w.-]+(?::\d+)?/v[12]/|Error response from daemon|error pulling image|Error while pulling"
                     r"|Download failed|Pulling (?:repository|from|fs layer)|failed to (?:do request|resolve reference"
                     r"|copy)|docker (?:pull|login|run|push)|registry")
UNTRUSTED_REGISTRY = re.compile(rf"(?:{_REGISTRY_CONTEXT}).*?(?:{_UNKNOWN_AUTHORITY})", re.IGNORECASE)
_HOST = re.compile(r"https?://(?P<host>[\w.-]+(?::\d+)?)/|(?:reference|login|pull) \"?(?P<named>[\w-]+(?:\.[\w-]+)+"
                   r"(?::\d+)?)/")
# Registries whose real chain every host trusts: a refusal of theirs is a chain someone else presented.
_PUBLIC = re.compile(r"(?:^|\.)(?:docker\.io|docker\.com|cloudfront\.net|cloudflare\.docker\.com|nvcr\.io|ngc\.nvidia\.com"
                     r"|ghcr\.io|githubusercontent\.com|quay\.io|gcr\.io|pkg\.dev|registry\.k8s\.io|public\.ecr\.aws"
                     r"|mcr\.microsoft\.com|dkr\.ecr\.[\w-]+\.amazonaws\.com|r2\.cloudflarestorage\.com)$", re.IGNORECASE)


@dataclass(frozen=True)
class UntrustedRegistry:
    host: str  # the registry (or blob host) whose chain was refused; "" where the line names none
    public: bool


def untrusted_registry(text: str) -> UntrustedRegistry | None:
    if not UNTRUSTED_REGISTRY.search(text):
        return None
    match = _HOST.search(text)
    host = (match["host"] or match["named"]) if match else ""
    # Docker's own words name a private registry ("If this private registry supports only HTTP or HTTPS ...").
    private = "private registry" in text.lower()
    return UntrustedRegistry(host, not private and (not host or bool(_PUBLIC.search(host.split(":")[0]))))


_RESTART = "`sudo systemctl restart docker` (dockerd reads the host's CA store only when it starts)"


def registry_fix(registry: UntrustedRegistry) -> str:
    if registry.public:
        named = registry.host or "the registry"
        return (f"Docker does not trust the certificate it was shown for {named}: a public registry's own chain is "
                "trusted everywhere, so a TLS-intercepting proxy (a corporate proxy, Zscaler, Netskope, an antivirus or "
                "a debugging proxy) presented its own, signed by the proxy's CA certificate. Get that CA certificate "
                "(your IT department's root certificate, or the last issuer `openssl s_client -connect "
                f"{registry.host.split(':')[0] or 'registry-1.docker.io'}:443 -showcerts` prints) and add it to the "
                "host's trust store: copy it (PEM) to /usr/local/share/ca-certificates/proxy-ca.crt and run `sudo "
                "update-ca-certificates` (Fedora/RHEL: /etc/pki/ca-trust/source/anchors/ and `sudo update-ca-trust`), "
                f"then {_RESTART}; or put it at /etc/docker/certs.d/{registry.host or 'REGISTRY'}/ca.crt for each "
                "registry (Docker Hub's layers also come from other hosts, so the trust store is the surer place). "
                "Docker Desktop (Windows, macOS) reads the system's certificate store: import the CA there and restart "
                "Docker Desktop. Never list a public registry in insecure-registries. Then `stackctl up` pulls again")
    host = registry.host or "REGISTRY:PORT"
    return (f"Docker does not trust the certificate of the private registry {registry.host or ''}: it is self-signed "
            "or signed by an internal CA the host does not have. Put that CA's certificate (the registry's own "
            f"certificate where it is self-signed) at /etc/docker/certs.d/{host}/ca.crt on this host (the directory "
            "named exactly as the image names the registry, port included; read at each pull, no restart needed), "
            f"or add it to the host's trust store (`sudo update-ca-certificates`) and {_RESTART}; a registry whose "
            "certificate does not name the host it is reached by needs a new certificate. Use insecure-registries "
            "only for a test registry. Then `stackctl up` pulls again")
