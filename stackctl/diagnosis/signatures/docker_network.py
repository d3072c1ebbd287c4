"""Docker's networking refused by the host's firewall: its iptables chains flushed after the daemon
started (docker_chains), and a table legacy iptables does not have in this kernel (iptables_tables)."""

from __future__ import annotations

from stackctl.diagnosis.docker_chains import CHAIN_MISSING, chains_fix, missing_chain
from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.iptables_tables import (
    TABLE_MISSING,
    missing_table,
    table_fix,
    table_modules,
)
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _docker_iptables_chain_missing(evidence: Evidence) -> Diagnosis:
    chain = missing_chain(evidence.text)
    return found(evidence, Cause.docker_iptables_chain_missing,
                 f"Docker could not add its network's firewall rule: the iptables chain {chain} is missing, so the "
                 "network (and the containers on it) cannot start",
                 Fix(chains_fix(chain) + "; stackctl's services use host networking, but Compose still makes the "
                     "project's default network"), chain=chain)


def docker_iptables_table_missing(evidence: Evidence) -> Diagnosis:
    """Legacy iptables without the kernel module of a table Docker writes to (iptables_tables)."""
    text = "\n".join(evidence.lines)
    missing = missing_table(text)
    modules = table_modules(missing, text)
    rules = "its per-container DROP rules (direct access filtering)" if missing == "raw" else "its network's rules"
    return found(evidence, Cause.docker_kernel_module_missing,
                 f"Docker cannot write {rules}: legacy iptables has no `{missing}` table in this kernel (the "
                 f"{' and '.join(modules)} module{'s' if len(modules) > 1 else ''} missing), so "
                 f"{'containers with a network cannot start' if missing == 'raw' else 'the daemon does not start'}",
                 Fix(table_fix(missing, modules)), modules=", ".join(modules), table=missing)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.docker_iptables_chain_missing, unnamed(CHAIN_MISSING), _docker_iptables_chain_missing),
    signature(Cause.docker_kernel_module_missing, unnamed(TABLE_MISSING), docker_iptables_table_missing),
)
