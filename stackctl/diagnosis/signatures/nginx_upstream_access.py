"""nginx's upstream connection refused by SELinux, and nginx's variables nothing defines
($connection_upgrade without its map) (nginx_upstream_access)."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.nginx_upstream_access import (
    UNKNOWN_VARIABLE,
    UPSTREAM_DENIED,
    unknown_variable,
    unknown_variable_fix,
    upstream_denied_fix,
)
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _upstream_denied(evidence: Evidence) -> Diagnosis:
    address = next(iter(evidence.read(UPSTREAM_DENIED).values()), "")
    return found(evidence, Cause.nginx_upstream_connect_denied,
                 f"nginx may not connect to its upstream {address} (13: Permission denied): SELinux's policy for "
                 "web servers", Fix(upstream_denied_fix(address)), address=address)


def _unknown_variable(evidence: Evidence) -> Diagnosis:
    variable = unknown_variable(evidence.text)
    assert variable is not None  # the trigger matched
    return found(evidence, Cause.nginx_variable_unknown,
                 f"nginx's configuration uses ${variable.name}, which nothing defines, so nginx does not start",
                 Fix(unknown_variable_fix(variable)), variable=variable.name)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.nginx_upstream_connect_denied, unnamed(UPSTREAM_DENIED), _upstream_denied),
    signature(Cause.nginx_variable_unknown, unnamed(UNKNOWN_VARIABLE), _unknown_variable),
)
