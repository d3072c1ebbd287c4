"""Prometheus's scrape of a loopback target refused: a containerised Prometheus reaching its own loopback, or one of
stackctl's services not running on the host network."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.scrape_loopback import LOOPBACK_REFUSED, loopback_fix, loopback_refused
from stackctl.diagnosis.signature import ADVISORY, Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity


def _scrape_loopback_refused(evidence: Evidence) -> Diagnosis:
    match = loopback_refused(evidence.text)
    if match is None:
        raise ValueError("no loopback scrape on this line")
    port = int(match["port"])
    key = evidence.context.port_keys.get(port)
    return found(evidence, Cause.prometheus_scrape_loopback_refused,
                 f"Prometheus's scrape of {match['url']} is refused: nothing answers on the loopback port {port} it "
                 "dials" + (f", stackctl's {key}" if key else ", which inside a container is the container's own"),
                 Fix(loopback_fix(match["url"], port, key), key=key), severity=Severity.advisory,
                 target=match["url"], port=port)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.prometheus_scrape_loopback_refused, unnamed(LOOPBACK_REFUSED), _scrape_loopback_refused, ADVISORY + 1),
)
