"""nginx's upstream closing the connection before its answer was whole."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.nginx_upstream_closed import CLOSED, closed, closed_fix, upstream_address
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity


def _closed(evidence: Evidence) -> Diagnosis:
    match = closed(evidence.line)
    if match is None:
        raise ValueError("the close is not on this line")
    upstream = upstream_address(match)
    return found(evidence, Cause.nginx_upstream_closed,
                 f"the upstream {upstream or '(not named in the log)'} closed the connection while nginx was "
                 f"{match['phase']}: that request failed", Fix(closed_fix(match, evidence.context.port_keys)),
                 severity=Severity.advisory, **({"upstream": upstream} if upstream else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.nginx_upstream_closed, unnamed(CLOSED), _closed),
)
