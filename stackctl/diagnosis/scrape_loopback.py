"""Prometheus's scrape of a loopback target refused: "Get http://127.0.0.1:8000/metrics: dial tcp 127.0.0.1:8000:
connect: connection refused" on its targets page or in its log. Read by the signature and by the fallback alike.

Inside a container on a bridge network 127.0.0.1 (localhost) is the container's own loopback, not the host's: an
exporter or application listening on the host refuses a containerised Prometheus that scrapes localhost
(django-commons/django-prometheus#118: `--net=host`; ChristianLempa/boilerplates#38: `network_mode: host`;
stefanprodan/dockprom#173: host.docker.internal). stackctl runs its services on the host network, so for its own
Prometheus localhost is the host: a refused port that is one of stackctl's is that service not running there.
A query of Prometheus's own API (Grafana's datasource, a client) is no scrape and keeps its reading.
"""

from __future__ import annotations

import re

LOOPBACK_REFUSED = re.compile(
    r"Get \\?\"?(?P<url>https?://(?P<host>localhost|127\.\d+\.\d+\.\d+|\[::1\]):(?P<port>\d+)(?!\d)(?!/(?:api|v1)/)[^\s\"\\]*)"
    r"\\?\"?: dial tcp \S+?:\d+: (?:connect|getsockopt): connection refused")


def loopback_refused(text: str) -> re.Match[str] | None:
    """Prometheus's refused scrape of a loopback target, or None."""
    return LOOPBACK_REFUSED.search(text)


def loopback_fix(url: str, port: int, port_key: str | None) -> str:
    if port_key:
        own = (f"port {port} is stackctl's {port_key.removeprefix('ports.')} ({port_key}): stackctl runs Prometheus on "
               "the host network (`network_mode: host`), so 127.0.0.1 is the host's and that service is not running "
               f"or not listening there: `stackctl status`, `stackctl logs {port_key.removeprefix('ports.')} "
               "--explain`. ")
        other = "A Prometheus of your own in a container on a bridge network"
    else:
        own = ""
        other = "A Prometheus in a container on a bridge network"
    return (f"{own}{other} scrapes its own loopback at {url}, not the host's, so a program listening on the host's "
            f"port {port} refuses it: run that Prometheus on the host network (`network_mode: host` in Compose, "
            "`docker run --network host`), as stackctl runs its own services, so localhost is the host; or keep the "
            f"bridge and scrape the host's address: host.docker.internal:{port} (on Linux add `extra_hosts: "
            "[\"host.docker.internal:host-gateway\"]`) or its LAN address, with the program listening there (0.0.0.0, "
            "not 127.0.0.1 only), or a service name on the same Compose network. Where Prometheus runs on the host "
            f"itself, nothing listens on {port}: `ss -ltnp 'sport = :{port}'`")
