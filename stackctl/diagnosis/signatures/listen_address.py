"""A service asked to listen on an address this host does not have (listen_addresses), and an IPv6
socket the kernel refuses."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.listen_addresses import ADDRESS, NOT_ON_HOST, not_on_host
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.signatures.connectivity import COMPOSE_SERVICE
from stackctl.diagnosis.stated_configs import IPV6_REFUSED, no_ipv6
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _listen_address_not_on_host(evidence: Evidence) -> Diagnosis:
    values = evidence.read(ADDRESS)
    address = next((value for name, value in values.items() if not name.endswith("_port")), "")
    port = next((value for name, value in values.items() if name.endswith("_port")), "")
    compose_service = next(iter(evidence.read(COMPOSE_SERVICE).values()), None)
    said = not_on_host(address, port, evidence.context.service, compose_service)
    return found(evidence, Cause.listen_address_not_on_host, said.summary,
                 Fix(f"{said.text}; then `stackctl up`", key=said.key, flag=said.flag),
                 **({"address": address} if address else {}), **({"port": int(port)} if port else {}))


def _ipv6_unavailable(evidence: Evidence) -> Diagnosis:
    stated = no_ipv6(evidence.text, evidence.context)
    if not stated:
        raise ValueError("no IPv6 refusal on the line")  # the next candidate is tried
    cause = stated[0]
    address = cause.name.removeprefix("no IPv6: ")
    return found(evidence, Cause.ipv6_unavailable,
                 f"{evidence.context.service} asked for IPv6 ({address}) where the host or container has it off "
                 "(97: Address family not supported by protocol)", Fix(cause.text, key=cause.key), address=address)


SIGNATURES: tuple[Signature, ...] = (
    # An IPv6 socket the kernel refuses (IPv6 off): told apart from an address the host lacks.
    signature(Cause.ipv6_unavailable, unnamed(*IPV6_REFUSED), _ipv6_unavailable),
    signature(Cause.listen_address_not_on_host, NOT_ON_HOST.pattern, _listen_address_not_on_host),
)
