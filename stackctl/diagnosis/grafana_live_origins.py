"""Grafana Live refusing a browser's WebSocket for its Origin, read by its signature and by the fallback alike.

From Grafana 8.0.4 on, Live checks the Origin header of the WebSocket upgrade (/api/live/ws) against root_url (its
appUrl) and `[live] allowed_origins` (grafana/grafana#35983, #36318), and each refusal is a warning: 'msg="Request
Origin is not authorized" logger=live origin=https://www.zoomsoft.de appUrl=https://www.zoomsoft.de:443/grafana/
allowedOrigins='. Dashboards still load over HTTP; the browser's console shows the WebSocket's 403 and live
updates stop. Two causes: root_url is not the address the browser uses (another host or port, or root_url left at
http://localhost:3000/: grafana/grafana#36693, fixed by correcting root_url; #36443, where a maintainer of Grafana
gave root_url or `[live] allowed_origins`), or, in 8.0.4 to 8.0.x, a root_url written with its scheme's default port
(https://HOST:443/): browsers send no default port, and the comparison kept it (grafana/grafana#36822, fixed in
8.1.0; `allowed_origins` until then).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

ORIGIN_REFUSED = re.compile(r"Request Origin is not authorized")
# The record's fields; a paste's markdown italics may close the line with "_".
_ORIGIN = re.compile(r"\borigin=\"?(?P<origin>[^\s\"]+?)\"?(?=\s|_?$)")
_APP_URL = re.compile(r"\bappUrl=\"?(?P<app_url>[^\s\"]+?)\"?(?=\s|_?$)")
_ALLOWED = re.compile(r"\ballowedOrigins=\"?(?P<allowed>[^\s\"]*?)\"?(?=\s|_?$)")
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class RefusedOrigin:
    origin: str  # the browser's (scheme://host[:port]), "" where the line does not say
    app_url: str  # root_url as Grafana read it
    allowed: str  # [live] allowed_origins, "" when unset


def refused_origin(text: str) -> RefusedOrigin | None:
    if not ORIGIN_REFUSED.search(text):
        return None
    origin, app_url, allowed = _ORIGIN.search(text), _APP_URL.search(text), _ALLOWED.search(text)
    return RefusedOrigin(origin["origin"] if origin else "", app_url["app_url"] if app_url else "",
                         allowed["allowed"] if allowed else "")


def default_port_written(refused: RefusedOrigin) -> bool:
    """root_url names its scheme's default port (https://HOST:443/) for the host the browser uses without it: the
    comparison Grafana 8.0.4 to 8.0.x made, fixed in 8.1.0."""
    app, origin = urlsplit(refused.app_url), urlsplit(refused.origin)
    return (bool(app.hostname) and app.port is not None and app.port == _DEFAULT_PORTS.get(app.scheme)
            and origin.port is None and app.hostname == origin.hostname and app.scheme == origin.scheme)


def refused_origin_fix(refused: RefusedOrigin) -> str:
    origin = refused.origin or "the address the browser uses (scheme://host:port)"
    app = urlsplit(refused.app_url)
    allow = (f"allow that origin: `[live] allowed_origins = {origin}` in grafana.ini (GF_LIVE_ALLOWED_ORIGINS in its "
             "environment; a comma-separated list, patterns such as https://*.example.com, `*` for any)")
    if default_port_written(refused):
        without = refused.app_url.replace(f":{app.port}", "", 1)
        lead = (f"root_url ({refused.app_url}) names the default port {app.port}, which browsers never send in the "
                f"Origin header ({origin}), and Grafana 8.0.4 to 8.0.x compared them with the port: write root_url "
                f"without it (`root_url = {without}` under [server], or GF_SERVER_ROOT_URL), or upgrade to Grafana "
                f"8.1.0 or later, which fixed it; or {allow}")
    else:
        seen = f" (appUrl={refused.app_url})" if refused.app_url else ""
        lead = (f"Grafana compares the browser's Origin ({origin}) with root_url{seen}, which is not the address the "
                f"browser uses: set root_url under [server] (GF_SERVER_ROOT_URL) to the URL users open, {origin} with "
                f"its sub path if Grafana is served from one; or {allow}")
    return (f"Grafana Live refused the browser's WebSocket (/api/live/ws, 403) for its origin: {lead}. Dashboards still "
            "load over HTTP; only live updates stop. stackctl's Grafana sets no root_url (appUrl http://localhost:PORT/), so opened by any "
            "other name it needs GF_LIVE_ALLOWED_ORIGINS or GF_SERVER_ROOT_URL in the grafana service's environment "
            "(an override file passed to `docker compose -f`, or grafana.ini natively)")
