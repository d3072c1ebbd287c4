"""nginx refusing to start because its ports are taken, where the log shows that the holder is most likely nginx
itself: a second start while one already runs.

nginx retries each listen socket five times, then gives up ("bind() to 0.0.0.0:80 failed (98: Address already in
use)" for each port, then "still could not bind()"). When several of its ports are taken at once, the program
holding them is most often an nginx already running: typed `nginx` again while the service runs (omega8cc/boa#1780,
"you shouldn't type nginx"; WWBN/AVideo#989, "that means NGINX is already running"), a start script that starts it
twice (alastria/alastria-node#628: the ports appear, held by nginx, only once its own nginx started), or the
distribution's nginx.service beside another. A listener list in the log (`ss -ltnp`, `netstat -tlnp`) that names the
holder decides: nginx (nginx/docker-nginx#308: `1/nginx: master pro` on 443) or another program, which keeps the
plain port-in-use reading.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

REFUSED_BIND = re.compile(r"bind\(\) to (?P<address>\S+?):(?P<port>\d+) failed \(98: Address (?:already )?in use\)")
# A listener in the output of `ss -ltnp` (users:(("nginx",pid=1,fd=6))), `netstat -tlnp` (1234/nginx: master) or
# `lsof -i :80` (apache2 25997 root 4u IPv6 34568 0t0 TCP *:http (LISTEN), StreisandEffect/streisand#91).
_LISTENER = re.compile(r"\S+:(?P<port>\d+)\s+\S+:[*\d]+\s+(?:LISTEN\s+\d+/(?P<netstat>[\w.-]+)|"
                       r"users:\(\(\"(?P<ss>[^\"]+)\")"
                       r"|^(?P<lsof>[\w.-]+)\s+\d+\s+\S+\s+\d+\w\s+IPv[46]\s+\S+\s+\S+\s+TCP\s+\S*:(?P<named>[\w-]+) "
                       r"\(LISTEN\)")
# The ports lsof shows by their service names.
_SERVICE_PORTS = {"http": "80", "https": "443", "http-alt": "8080"}


def refused_ports(lines: Sequence[str]) -> list[str]:
    """The ports nginx could not bind, in order, each once (its IPv4 and IPv6 sockets are one port)."""
    ports: list[str] = []
    for line in lines:
        for match in REFUSED_BIND.finditer(line):
            if match["port"] not in ports:
                ports.append(match["port"])
    return ports


def holders(lines: Sequence[str], ports: Sequence[str]) -> set[str]:
    """The programs a listener list in the log shows holding any of `ports`."""
    held = set()
    for line in lines:
        for match in _LISTENER.finditer(line.strip()):
            port = match["port"] or _SERVICE_PORTS.get(match["named"], match["named"])
            if port in ports:
                held.add((match["netstat"] or match["ss"] or match["lsof"]).lower())
    return held


def held_by_nginx(lines: Sequence[str]) -> list[str] | None:
    """The ports refused, where the log shows nginx itself most likely holds them: a listener list naming nginx, or
    (no list naming another program) several ports refused at once; else None."""
    ports = refused_ports(lines)
    named = holders(lines, ports)
    if named:
        return ports if any(name.startswith("nginx") for name in named) else None
    return ports if len(ports) > 1 else None


def already_running_fix(ports: Sequence[str], key: str | None, listed: bool) -> str:
    shown = ", ".join(ports)
    taken = (f"nginx could not bind port{'s' if len(ports) > 1 else ''} {shown}, and the log's own listener list shows "
             "nginx holding it: nginx is already running" if listed else
             f"nginx could not bind ports {shown}, several at once, which most often means nginx is already running")
    move = f", or move {key} in stack.yaml to a free port" if key else ""
    return (f"{taken} and this start is a second one (`nginx` typed while the service runs, a script that starts it twice, "
            f"the distribution's nginx.service beside stackctl's nginx). `ss -ltnp 'sport = :{ports[0]}'` names the "
            "holder: stop the other nginx (`sudo nginx -s stop`, or `sudo systemctl stop nginx` and `sudo systemctl "
            "disable nginx` for the distribution's), or reload the running one (`nginx -s reload`) instead of starting "
            f"another. Where another program holds them (apache2, caddy, a container), stop it{move}; then `stackctl up`")
