"""nginx's "host not found in upstream NAME" where NAME is a domain name (dotted, not an address), read by the web
signatures and by the fallback alike.

A one-word upstream (php, app, pipedfrontend:80) is a container or Compose service name: the web signature's own
reading (the container not up yet, or in another network). A domain name is a public one: often this host's own
(wmnnd/nginx-certbot#98: a dyndns name with only an IPv6 address, put in proxy_pass by its template, fixed with
`upstream hostname.example.com { server localhost; }`), which nginx must resolve at start from where it runs: a
container with its own resolver, a name with only an AAAA record where nginx's resolution finds none, a name not yet
in DNS. An upstream on the same host is reached by its loopback address, with no lookup at all.
"""

from __future__ import annotations

import re

# The upstream as nginx names it: quoted ("NAME:PORT") or, as some pastes have it, bare.
UPSTREAM_UNKNOWN = re.compile(r"host not found in upstream \"?(?P<host>[^\s\"]+?)\"?(?: in |,|$)")
_DOMAIN = re.compile(r"^(?=[^:]*[A-Za-z])[\w-]+(?:\.[\w-]+)+$")


def unknown_upstream(text: str) -> str | None:
    """The upstream (NAME or NAME:PORT) `text` says nginx could not resolve; None where it says no such thing."""
    match = UPSTREAM_UNKNOWN.search(text)
    return None if match is None else match["host"]


def domain_name(upstream: str) -> str | None:
    """The upstream's host where it is a domain name (dotted, not an address); else None."""
    host = upstream.rsplit(":", 1)[0] if upstream.rsplit(":", 1)[-1].isdigit() else upstream
    return host if _DOMAIN.match(host) else None


def domain_fix(name: str, upstream: str) -> str:
    """What to do where nginx could not resolve the domain name `name` it proxies to."""
    port = upstream.rsplit(":", 1)[-1] if upstream.rsplit(":", 1)[-1].isdigit() else "PORT"
    return (f"nginx resolves {name} once, at start, from where it runs, and found no address (`getent hosts {name}` "
            "there; inside a container `docker exec NGINX getent hosts NAME`): a public name, often this host's own "
            "(a dyndns name, one with only an IPv6 address, one not yet in DNS). Where the upstream runs on the same "
            f"host, proxy to it by its loopback address, with no lookup: `proxy_pass http://127.0.0.1:{port};`, or an "
            f"upstream block of that name, `upstream {name} {{ server localhost:{port}; }}` (an nginx in a container "
            "with its own network reaches the host as host.docker.internal, with `extra_hosts: "
            "[\"host.docker.internal:host-gateway\"]`, or shares it with `network_mode: host`); elsewhere, use its "
            "address or a name this host resolves. stackctl's own upstreams are addresses (127.0.0.1, or the GPU "
            "hosts' under hosts: in stack.yaml), so the name is in a site added by hand; then `stackctl up`")
