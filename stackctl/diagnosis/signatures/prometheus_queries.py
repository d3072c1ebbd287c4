"""Prometheus refusing what it is asked while it runs: a query over its sample limit, a reload through the
lifecycle API it was started without."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.prometheus_queries import (
    LIFECYCLE_DISABLED,
    TOO_MANY_SAMPLES,
    lifecycle_fix,
    too_many_samples_fix,
)
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity


def _too_many_samples(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.prometheus_query_too_many_samples,
                 "Prometheus refused a query that would load more samples than --query.max-samples allows; it keeps "
                 "running", Fix(too_many_samples_fix(), flag="--query.max-samples"), severity=Severity.advisory)


def _lifecycle_disabled(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.prometheus_lifecycle_disabled,
                 "Prometheus refused a reload (or quit) through its HTTP lifecycle API, which it was started without; "
                 "it keeps running with the configuration it had", Fix(lifecycle_fix(), flag="--web.enable-lifecycle"),
                 severity=Severity.advisory)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.prometheus_query_too_many_samples, unnamed(TOO_MANY_SAMPLES), _too_many_samples),
    signature(Cause.prometheus_lifecycle_disabled, LIFECYCLE_DISABLED.pattern, _lifecycle_disabled),
)
