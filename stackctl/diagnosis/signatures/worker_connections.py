"""nginx's workers out of connections: worker_connections in the events block, and the open-file limit with it."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.nginx_worker_connections import (
    connections_exhausted,
    connections_fix,
    suggested_connections,
)
from stackctl.diagnosis.signature import ADVISORY, Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity


def _exhausted(evidence: Evidence) -> Diagnosis:
    exhausted = connections_exhausted(evidence.line)
    if exhausted is None:
        raise ValueError("the alert is not on this line")
    # "reusing connections": nginx closed idle keep-alive connections and went on (a warning); otherwise it failed
    # the request.
    return found(evidence, Cause.nginx_worker_connections_exhausted,
                 f"nginx's workers ran out of connections (worker_connections {exhausted.count})"
                 + (": it is closing idle keep-alive connections to go on" if exhausted.reusing
                    else ", so it fails the requests past them"),
                 Fix(f"{connections_fix(exhausted)}; then `stackctl up`",
                     value=str(suggested_connections(exhausted.count))),
                 severity=Severity.advisory if exhausted.reusing else Severity.fatal,
                 connections=exhausted.count, **({"during": exhausted.during} if exhausted.during else {}))


SIGNATURES: tuple[Signature, ...] = (
    # The alert outweighs the warning that comes before it (the latest among equals would be either).
    signature(Cause.nginx_worker_connections_exhausted, r"\d+ worker_connections are not enough(?!, reusing)",
              _exhausted),
    signature(Cause.nginx_worker_connections_exhausted, r"worker_connections are not enough, reusing connections",
              _exhausted, ADVISORY),
)
