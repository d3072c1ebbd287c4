"""A container name another container already holds: Docker's and Compose's refusal."""

from __future__ import annotations

from stackctl.diagnosis.docker_name_conflicts import (
    NAME_TAKEN,
    name_taken,
    name_taken_fix,
    stackctl_service,
)
from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _name_taken(evidence: Evidence) -> Diagnosis:
    match = name_taken(evidence.line)
    if match is None:
        raise ValueError("the refusal is not on this line")
    name, container = match["name"], match["container"]
    return found(evidence, Cause.docker_container_name_conflict,
                 f"Docker refused to create a container named {name}: another container ({container[:12] if container else 'unnamed'}) "
                 "already has that name",
                 # One of stackctl's own names (PROJECT-SERVICE-1): stack.yaml's project sets it.
                 Fix(name_taken_fix(name, container), key="project" if stackctl_service(name) else None),
                 name=name, **({"container": container} if container else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.docker_container_name_conflict, unnamed(NAME_TAKEN), _name_taken),
)
