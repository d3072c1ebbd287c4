"""A container on host networking that also publishes ports, read by its signature and by the fallback alike.

With `network_mode: host` a container shares the host's network stack: the program in it listens on the host's
ports itself, so there is nothing to publish. Docker Compose 1.28 and later (through docker-py) refuse a service
that has both: '"host" network_mode is incompatible with port_bindings', once for the container and once for the
service (tinkerbell/playground#53, fixed by tinkerbell/tink#501 removing the ports; h44z/wg-portal#84, "you can
safely remove the ports section"; thermos#2). Compose v2 and `docker run --net=host -p` start the container and
drop the ports with a warning, "Published ports are discarded when using host network mode"
(kirshiyin89/springboot-monitoring-demo#2). Remove the service's `ports:`; to remap a port, leave host networking.

stackctl renders `network_mode: host` for every service and publishes no port: each one listens on the host port
stack.yaml's ports.* sets, so a `ports:` section comes from a compose override or a file edited by hand.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from stackctl.diagnosis.stack_keys import SERVICE_PORT_KEYS

REFUSED = re.compile(r"\"host\" network_mode is incompatible with port_bindings")
DISCARDED = re.compile(r"Published ports are discarded when using host network mode")
HOST_PORTS = re.compile(f"{REFUSED.pattern}|{DISCARDED.pattern}")
# Compose 1 names the container and then the service ("ERROR: for 0500c116a4ac_prometheus", "ERROR: for prometheus");
# Compose 2 prefixes its warning with the service (" ⠋ grafana Published ports are discarded").
_NAMED = re.compile(r"ERROR: for (?P<refused>[\w.-]+)\s+\"host\" network_mode|(?P<warned>[\w.-]+) Published ports are "
                    r"discarded")
# A container's name as Compose 1 recreates it: the old container's id before the service's name.
_CONTAINER_ID = re.compile(r"^[0-9a-f]{12}_")


def host_ports(text: str) -> re.Match[str] | None:
    """The refusal or the warning, or None."""
    return HOST_PORTS.search(text)


def services_named(lines: Iterable[str]) -> list[str]:
    """The services (not their containers) the log names with the refusal or the warning, in order."""
    named: list[str] = []
    for line in lines:
        for match in _NAMED.finditer(line):
            name = match["refused"] or match["warned"]
            if not _CONTAINER_ID.match(name) and name not in named:
                named.append(name)
    return named


def host_ports_fix(services: list[str], refused: bool) -> str:
    who = (f"the service{'s' if len(services) > 1 else ''} {', '.join(services)}" if services else
           "a service")
    what = ("Compose 1.28 and later refuse the pair (\"host\" network_mode is incompatible with port_bindings)"
            if refused else "Compose v2 and Docker start it anyway and drop the ports")
    own = [f"{SERVICE_PORT_KEYS[name]} for {name}" for name in services if name in SERVICE_PORT_KEYS]
    keys = f" ({', '.join(own)})" if own else ""
    run, publish = ("run", "publish") if len(services) > 1 else ("runs", "publishes")
    return (f"{who} {run} with `network_mode: host` and also {publish} ports (`ports:`): "
            "on host networking a container shares the host's network, so its program listens on the host's ports "
            f"itself and there is nothing to publish; {what}. Remove the ports section (`ports:`) of "
            f"{'those services' if len(services) > 1 else 'that service'}: it is reached on the port its program "
            "listens on. To remap a port instead, leave host networking (a bridge network) and keep `ports:`. stackctl "
            "renders `network_mode: host` for every service and publishes no port: each listens on the host port "
            f"stack.yaml's ports.* sets{keys}, so a ports section comes from a compose override or a file edited by "
            "hand: remove it there and set the port in stack.yaml; then `stackctl up`")
