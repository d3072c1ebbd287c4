"""Which of stack.yaml's hosts this machine is: the one whose address is one of its own."""

from __future__ import annotations

import socket

from stackctl.config_hosts import HostSpec


def is_local_address(address: str) -> bool:
    """True when this machine (this network namespace) holds `address`: only then can a socket
    bind it."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((address, 0))
        except OSError:
            return False
    return True


def local_host(hosts: dict[str, HostSpec]) -> str | None:
    """The one host whose address is local (None: none is, or several are)."""
    found = [name for name, spec in hosts.items() if is_local_address(spec.address)]
    return found[0] if len(found) == 1 else None
