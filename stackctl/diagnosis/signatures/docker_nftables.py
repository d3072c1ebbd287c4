"""dockerd's start refused by iptables' nf_tables backend: a backend it cannot use here (Docker in Docker) and
its chains already there."""

from __future__ import annotations

from stackctl.diagnosis.docker_nftables import (
    CHAIN_EXISTS,
    NFT_ADD_FAILED,
    chain_exists_fix,
    existing_chain,
    nft_add_fix,
    nft_operation,
)
from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _nft_unusable(evidence: Evidence) -> Diagnosis:
    operation = nft_operation(evidence.text) or "CHAIN_ADD"
    return found(evidence, Cause.docker_nftables_refused,
                 f"iptables' nf_tables backend could not add Docker's rules ({operation} failed), so dockerd stops",
                 Fix(nft_add_fix(operation)), kind="backend unusable", operation=operation)


def _chain_exists(evidence: Evidence) -> Diagnosis:
    chain = existing_chain(evidence.line) or existing_chain(evidence.text) or "DOCKER"
    return found(evidence, Cause.docker_nftables_refused,
                 f"Docker's {chain} chain already exists when the daemon creates it, so dockerd stops",
                 Fix(chain_exists_fix(chain)), kind="chain exists", chain=chain)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.docker_nftables_refused, unnamed(NFT_ADD_FAILED), _nft_unusable),
    signature(Cause.docker_nftables_refused, unnamed(CHAIN_EXISTS), _chain_exists),
)
