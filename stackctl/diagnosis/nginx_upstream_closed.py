"""nginx's upstream closing the connection before its answer was whole ("upstream prematurely closed connection
while reading response header from upstream", "... while reading upstream"), read by its signature and by the
fallback alike. nginx keeps running; the client of that request gets a 502 or a cut answer.

The upstream ended the connection, and nginx's line alone does not say why; the usual causes:

- the upstream itself: it crashed or restarted, a worker was killed on a timeout or for memory, it reached its own
  connection limit (master-coder-ll/v2ray-web-manager#86: fixed by raising the upstream's connection limit): its
  own log says which;
- a site that sends `Connection: upgrade` on every request (`proxy_set_header Connection "upgrade";` beside
  `Upgrade $http_upgrade`, copied from websocket examples): a server may close a plain request that asks to
  upgrade (iv-org/invidious#604: fixed by `proxy_set_header Connection $http_connection;`). Only websocket requests
  should ask: the client's own header, or a map of $http_upgrade;
- kept-alive upstream connections (`keepalive` in an upstream block) that the upstream closes when idle sooner than
  nginx reuses them (a comment on invidious#604);
- an upstream that speaks TLS on that port, proxied as http:// (kubernetes/ingress-nginx#4480).

stackctl's own site proxies to the filter-proxy with `Connection ""` (kept-alive, never an upgrade).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

CLOSED = re.compile(r"upstream prematurely closed connection while (?P<phase>reading response header from upstream|"
                    r"reading upstream|sending to client|[a-z ]+?)(?=,|$)(?:[^\n]*?upstream: \"(?P<upstream>[^\"]+)\")?")
# A masked port ("127.0.0.1:xxxx" in a pasted log) is kept as it is written.
_ADDRESS = re.compile(r"^(?P<scheme>\w+)://(?P<host>\[[^\]]+\]|[^:/]+)(?::(?P<port>[^/\s]+))?")
# Ports that serve TLS by convention.
_TLS_PORTS = frozenset({"443", "8443", "9443"})


def closed(text: str) -> re.Match[str] | None:
    """The upstream's early close (its phase and the upstream nginx names), or None."""
    return CLOSED.search(text)


def upstream_address(match: re.Match[str]) -> str:
    """The upstream nginx names, without the request's path (http://10.0.0.5:3000); "" where it names none."""
    address = _ADDRESS.search(match["upstream"] or "")
    return address[0] if address else match["upstream"] or ""


def closed_fix(match: re.Match[str], port_keys: Mapping[int, str]) -> str:
    upstream = upstream_address(match)
    address = _ADDRESS.search(upstream)
    when = ("before it sent its response header" if "header" in match["phase"] else "partway through its response")
    causes = []
    if address and address["scheme"] == "http" and address["port"] in _TLS_PORTS:
        causes.append(f"{upstream} is a TLS port proxied as http://: proxy to it as `https://` (its own log then shows "
                      "no more plaintext handshakes)")
    own = "its own log says why (a crash or restart, a worker killed on a timeout or for memory, its connection limit)"
    if address and (address["port"] or "").isdigit() and port_keys.get(int(address["port"])) == "ports.proxy":
        own += ": it is stackctl's filter-proxy, `stackctl logs filter-proxy`"
    causes += [
        f"the upstream ended it itself: {own}",
        ("a site that sends `Connection: upgrade` on every request (`proxy_set_header Connection \"upgrade\";` from a "
         "websocket example): send the client's own header instead, `proxy_set_header Connection $http_connection;`, "
         "or map it so only websocket requests upgrade (`map $http_upgrade $connection_upgrade { default upgrade; '' "
         "''; }` in the http block and `proxy_set_header Connection $connection_upgrade;`)"),
        ("kept-alive connections (`keepalive` in an upstream block) that the upstream closes when idle sooner than "
         "nginx reuses them: give the upstream a longer idle timeout than nginx's, or drop keepalive for it"),
    ]
    numbered = "; ".join(f"({number}) {cause}" for number, cause in enumerate(causes, 1))
    return (f"the upstream {upstream or 'nginx proxies to'} closed the connection {when}, so that request failed (a 502 "
            f"or a cut answer) while nginx keeps running. The usual causes: {numbered}. stackctl's own site proxies "
            "to the filter-proxy with `Connection \"\"` (kept alive, never an upgrade), so a forced upgrade comes from "
            "a site added by hand; `nginx -t` tests a change before `nginx -s reload`")
