"""Docker's networking refused by the host's firewall: its iptables chains flushed after the daemon
started (docker_chains)."""

from __future__ import annotations

from stackctl.diagnosis.docker_chains import CHAIN_MISSING, chains_fix, missing_chain
from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _docker_iptables_chain_missing(evidence: Evidence) -> Diagnosis:
    chain = missing_chain(evidence.text)
    return found(evidence, Cause.docker_iptables_chain_missing,
                 f"Docker could not add its network's firewall rule: the iptables chain {chain} is missing, so the "
                 "network (and the containers on it) cannot start",
                 Fix(chains_fix(chain) + "; stackctl's services use host networking, but Compose still makes the "
                     "project's default network"), chain=chain)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.docker_iptables_chain_missing, unnamed(CHAIN_MISSING), _docker_iptables_chain_missing),
)
