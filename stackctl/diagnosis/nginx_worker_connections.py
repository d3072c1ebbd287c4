"""nginx's workers out of connections, read by its signature and by the fallback alike.

Each nginx worker holds at most worker_connections connections at once (the events block; 512 by default, 1024 in
the distributions' and the official image's nginx.conf), and a proxied request holds two: the client's and the
upstream's. When all are in use nginx says "[alert] N worker_connections are not enough" and refuses or fails the
request ("... while connecting to upstream": a 500 to the client); "[warn] N worker_connections are not enough,
reusing connections" comes first, as it closes idle keep-alive connections. Raising worker_connections in the
events block fixes it (alangecker/bigbluebutton-docker#91: "increasing the `worker_connections` setting in nginx
solved that"; bigbluebutton/bigbluebutton#11347: `worker_connections 4000;` with `worker_rlimit_nofile 10000;`, and
BigBlueButton 2.3 raised both; medic/cht-core#2076), with the open-file limit to match, since every connection is a
file descriptor. Where a large count still runs out, something holds connections open (bigbluebutton#15057 at 20000:
WebSockets, long timeouts; slact/nchan#346: subscribers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NOT_ENOUGH = re.compile(r"(?P<count>\d+) worker_connections are not enough(?P<reusing>, reusing connections)?"
                        r"(?: while (?P<during>[a-z ]+?)(?=,|$))?")
# A suggestion well above the usual defaults: ten times 1024, or twice a count already above that.
_SUGGESTED = 10240


@dataclass(frozen=True)
class ConnectionsExhausted:
    count: int  # worker_connections as it is now
    reusing: bool  # the warning before the refusal: nginx closed idle keep-alive connections to go on
    during: str  # what the worker was doing ("connecting to upstream"), "" where the line does not say


def connections_exhausted(text: str) -> ConnectionsExhausted | None:
    match = NOT_ENOUGH.search(text)
    if match is None:
        return None
    return ConnectionsExhausted(int(match["count"]), bool(match["reusing"]), match["during"] or "")


def suggested_connections(count: int) -> int:
    return max(_SUGGESTED, count * 2)


def connections_fix(exhausted: ConnectionsExhausted) -> str:
    larger = suggested_connections(exhausted.count)
    during = f" ({exhausted.during})" if exhausted.during else ""
    return (f"every connection an nginx worker may hold is in use{during}: worker_connections is {exhausted.count}, and "
            "a proxied request holds two (the client's and the upstream's). Raise it in nginx.conf's events block, "
            f"`events {{ worker_connections {larger}; }}`, and the workers' open-file limit with it, `worker_rlimit_nofile "
            f"{larger * 2};` in the main context (each connection is a file descriptor), then `nginx -t` and reload. If "
            "it still runs out, something holds connections open: long keepalive_timeout or proxy_read_timeout values, "
            "WebSockets or long polling, an upstream that answers slowly; `ss -tn state established | wc -l` (or "
            "stub_status) counts them. stackctl's native nginx.conf sets worker_connections 1024, and its Compose nginx "
            "keeps the image's nginx.conf (1024 as well): give the workers more in an nginx.conf of your own mounted "
            "at /etc/nginx/nginx.conf by an override file passed to `docker compose -f`")
