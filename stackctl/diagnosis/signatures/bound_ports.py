"""nginx's ports taken where the log shows the holder is most likely nginx itself, a second start: read before the
plain port-in-use signature, which keeps every other taken port."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.nginx_bound_ports import (
    REFUSED_BIND,
    already_running_fix,
    held_by_nginx,
    holders,
)
from stackctl.diagnosis.signature import ROOT_CAUSE, Signature, found, signature, unnamed
from stackctl.diagnosis.stack_keys import port_key
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _already_running(evidence: Evidence) -> Diagnosis:
    ports = held_by_nginx(evidence.lines)
    refused = REFUSED_BIND.search(evidence.line)
    if ports is None or refused is None:
        raise ValueError("nothing says nginx holds these ports: the plain port-in-use reading")
    port = int(refused["port"])
    key = port_key(port, evidence.context.service, evidence.context.port_keys)
    listed = bool(holders(evidence.lines, ports))
    return found(evidence, Cause.port_in_use,
                 f"nginx could not bind port{'s' if len(ports) > 1 else ''} {', '.join(ports)}: most likely another "
                 "nginx already holds them", Fix(already_running_fix(ports, key, listed), key=key),
                 port=port, ports=", ".join(ports))


SIGNATURES: tuple[Signature, ...] = (
    # One weight above the plain port-in-use signature on the same line, which it leaves to where nothing says nginx.
    signature(Cause.port_in_use, unnamed(REFUSED_BIND), _already_running, ROOT_CAUSE + 1),
)
