"""A container on host networking that also publishes ports: Compose 1's refusal, Compose 2's and Docker's warning."""

from __future__ import annotations

from stackctl.diagnosis.compose_host_ports import (
    HOST_PORTS,
    REFUSED,
    host_ports_fix,
    services_named,
)
from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity


def _host_ports(evidence: Evidence) -> Diagnosis:
    services = services_named(evidence.lines)
    refused = any(REFUSED.search(line) for line in evidence.lines)
    return found(evidence, Cause.docker_host_network_ports,
                 f"{', '.join(services) or 'a service'} on host networking also publish{'' if len(services) > 1 else 'es'}"
                 " ports: " + ("Compose refuses to create the container" if refused else
                               "Docker starts it and discards the ports"),
                 Fix(host_ports_fix(services, refused)), severity=Severity.fatal if refused else Severity.advisory,
                 **({"services": ", ".join(services)} if services else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.docker_host_network_ports, HOST_PORTS.pattern, _host_ports),
)
