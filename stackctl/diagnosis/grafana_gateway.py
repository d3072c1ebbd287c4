"""Grafana's "HTTP Error Bad Gateway" for a datasource (its Save & Test, a panel's query): Grafana's own server
proxies the datasource's requests and answers 502 when it cannot reach the datasource URL.

The URL is dialled by Grafana's server, not by the browser: it must be the address as Grafana's process or
container sees it. localhost inside a Grafana container is the container itself, so a Grafana in a Compose
network reaches Prometheus by its service name (http://prometheus:9090: vegasbrianc/prometheus#28, "I forgot
to change localhost"; dockprom#213, the datasource by the container's address); a Grafana on the host network,
as stackctl runs it, reaches it at localhost (tutorials#90: http://localhost:9090 in place of prometheus:9090).
"""

from __future__ import annotations

import re

# Grafana's UI message (older releases: "HTTP Error - Bad Gateway"); not a client's "HTTP Error 502: Bad Gateway".
BAD_GATEWAY = re.compile(r"\bHTTP Error:? -? ?Bad Gateway\b")


def bad_gateway(text: str) -> bool:
    return BAD_GATEWAY.search(text) is not None


def bad_gateway_fix(key: str, port: int) -> str:
    return (f"Grafana's server (not the browser) could not reach the datasource URL and answered 502: set the "
            f"datasource URL to the address as Grafana itself sees it. stackctl runs Grafana on the host network and "
            f"provisions http://127.0.0.1:{port} ({key} in stack.yaml; http://localhost:{port} is the same), where "
            "localhost is the host; a Grafana in a container on a Compose network of its own reaches Prometheus by "
            f"its service name (http://prometheus:{port}), never localhost, which is Grafana's own container. Check "
            "from where Grafana runs: `curl http://127.0.0.1:PORT/-/ready` on the host, or `docker exec grafana wget "
            "-qO- URL/-/ready` for a container; and that Prometheus runs (`stackctl status`, `stackctl logs prometheus "
            "--explain`)")
