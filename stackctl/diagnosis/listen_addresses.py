"""A service asked to listen on an address this host does not have (EADDRNOTAVAIL, "cannot assign
requested address"): no interface carries it. Not a port in use: the port may be free; the address
is the listen setting's, whichever program says it (Go's "listen tcp ADDR:PORT: bind:", uvicorn's
"[Errno 99] error while attempting to bind on address", nginx's "bind() to ADDR:PORT failed (99:",
Docker's userland proxy for a `ports:` entry with an address). Shared by the class and the fallback."""

from __future__ import annotations

import re
from dataclasses import dataclass

# A listen or bind, not a connect: a client's "connect: cannot assign requested address" is its own
# ephemeral ports running out, or an address family off.
NOT_ON_HOST = re.compile(r"\b(?:listen(?:er)?|bind)\b.*\b(?:cannot|can't) assign requested address"
                         r"|\b(?:listen(?:er)?|bind)\b.*\bEADDRNOTAVAIL\b|java\.net\.BindException: (?:Cannot|Can't) assign "
                         r"requested address", re.IGNORECASE)
# The address and port each program's words name.
ADDRESS = re.compile(
    r"listen tcp[46]? (?P<go>\[[^\]]+\]|[^\s:]*):(?P<go_port>\d+): bind"
    r"|bind on address \('(?P<uvicorn>[^']*)', (?P<uvicorn_port>\d+)"
    r"|bind\(\) to (?P<nginx>\[[^\]]+\]|[^\s:]+):(?P<nginx_port>\d+) failed"
    r"|cannot listen on (?P<own>\[[^\]]+\]|[^\s:]+):(?P<own_port>\d+)", re.IGNORECASE)

# Where each service's listen address is set: the setting in its own words, whether its value
# carries the port (ADDRESS:PORT), the stack.yaml key behind it where one is, what stackctl renders.
_HOSTS = "hosts"


@dataclass(frozen=True)
class _Setting:
    name: str
    with_port: bool
    key: str | None = None
    rendered: str = ""


_SETTINGS = {
    "node-exporter": _Setting("--web.listen-address", True, None, "stackctl's fragment renders "
                              "--web.listen-address=127.0.0.1:ports.node_exporter (loopback: Prometheus scrapes it "
                              "there)"),
    "gpu-exporter": _Setting("--web.listen-address", True, None, "stackctl's fragment renders 127.0.0.1:"
                             "ports.gpu_exporter"),
    "prometheus": _Setting("--web.listen-address", True, _HOSTS, "stackctl renders 127.0.0.1 on a one-box stack, "
                           "and on a multi-host stack's other hosts their hosts.NAME.address, which must be that "
                           "host's own (`stackctl up --host NAME` on that host)"),
    "filter-proxy": _Setting("--host", False, _HOSTS, "stackctl renders 127.0.0.1, and behind an edge host the gpu "
                             "host's hosts.NAME.address, which must be that host's own (`stackctl up --host NAME` on "
                             "that host)"),
    "vllm": _Setting("--host", False, "vllm.extra_args", "stackctl runs vLLM with --host 127.0.0.1 (the "
                     "filter-proxy fronts it): remove a --host from vllm.extra_args"),
    "ray-head": _Setting("--node-ip-address", False, _HOSTS, "stackctl renders this host's hosts.NAME.link_address "
                         "(else its address), which must be this host's own"),
    "ray-worker": _Setting("--node-ip-address", False, _HOSTS, "stackctl renders this host's "
                           "hosts.NAME.link_address (else its address), which must be this host's own"),
    "grafana": _Setting("http_addr under [server] in grafana.ini (GF_SERVER_HTTP_ADDR)", False, None,
                        "stackctl sets only the port (GF_SERVER_HTTP_PORT), so Grafana listens on every address"),
    "nginx": _Setting("the `listen ADDRESS:PORT` directive", True, None, "stackctl's own site listens on "
                      "ports.http and ports.https on every address (`listen PORT`): the address is in another site "
                      "or nginx.conf"),
    "supervisord": _Setting("`port=` under [inet_http_server]", True),
}
_ANY = _Setting("its listen address setting", True)


@dataclass(frozen=True)
class NotOnHost:
    """What to say of an address the host lacks: the fix sentence, its key and flag, and the summary."""

    summary: str
    text: str
    key: str | None
    flag: str | None


def listen_address(line: str) -> tuple[str, str]:
    """(address, port) the line names, each "" where it names none."""
    match = ADDRESS.search(line)
    if match is None:
        return "", ""
    values = {name: value for name, value in match.groupdict().items() if value}
    address = next((value for name, value in values.items() if not name.endswith("_port")), "")
    port = next((value for name, value in values.items() if name.endswith("_port")), "")
    return address, port


def not_on_host(address: str, port: str, service: str, compose_service: str | None = None) -> NotOnHost:
    """The fix of `service` listening on `address`:`port` that the host lacks; for Docker's client, the
    Compose service whose `ports:` entry names it (`compose_service`)."""
    shown = f"[{address}]" if ":" in address and not address.startswith("[") else address
    at = f"{shown}:{port}" if address and port else "an address"
    every = f":{port}" if port else ":PORT"
    setting: _Setting | None
    if service in ("docker", "compose"):
        # Docker publishing a port on an address: the host side of a `ports:` entry.
        service = compose_service or "the container"
        setting, text = None, (
            f"remove the address from the service's `ports:` entry (`\"{port or 'PORT'}:CONTAINER_PORT\"` publishes on "
            "every address) or use one this host has (`ip -br addr` lists them); stackctl's services run on the "
            "host's network and publish no ports")
    else:
        setting = _SETTINGS.get(service, _ANY)
        choices = (f"{every} or 0.0.0.0{every} for every address, 127.0.0.1{every} for this host alone"
                   if setting.with_port else "0.0.0.0 for every address, 127.0.0.1 for this host alone")
        text = (f"set {setting.name} to an address this host has (`ip -br addr` lists them): {choices}; do not "
                "hardcode an address that is not this host's" + (f"; {setting.rendered}" if setting.rendered else ""))
    summary = (f"{service} cannot listen on {at}: that address is not one of this host's (cannot assign requested "
               "address), so it does not start; the port itself may be free")
    flag = setting.name if setting and setting.name.startswith("--") else None
    return NotOnHost(summary, f"{text}; {_why(address)}", setting.key if setting else None, flag)


def _why(address: str) -> str:
    """What usually puts an address there that the host lacks."""
    bare = address.strip("[]")
    if ":" in bare:
        return (f"{bare} is an IPv6 address and IPv6 is off on this host or in the container (`localhost` resolving "
                "to ::1 is the usual way in): listen on 127.0.0.1 or 0.0.0.0 instead, or enable IPv6")
    return ("the usual causes: another machine's address (a config copied from it, or `stackctl up --host NAME` "
            "with another host's NAME); an address inside a container on a bridge network, which has only its own (a Docker bridge "
            "address such as 172.17.0.1 is the host's, not the container's: run it with network_mode: host as "
            "stackctl's fragments do); a cloud VM's public address, which sits on no interface (use its private "
            "address); an address that comes up only later (DHCP, a VPN, at boot): start the service after the "
            "network is online (systemd: After= and Wants=network-online.target)")
