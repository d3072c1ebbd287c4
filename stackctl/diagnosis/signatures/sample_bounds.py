"""Samples Prometheus drops for timestamps outside what its database accepts (a warning each scrape)."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.prometheus_sample_bounds import (
    OUT_OF_BOUNDS,
    out_of_bounds_fix,
    scrape_named,
)
from stackctl.diagnosis.signature import ADVISORY, Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity


def _out_of_bounds(evidence: Evidence) -> Diagnosis:
    named = scrape_named(evidence.line)
    dropped = f"{named['dropped']} " if "dropped" in named else ""
    return found(evidence, Cause.prometheus_samples_out_of_bounds,
                 f"Prometheus dropped {dropped}samples of {named.get('target', 'a target')} whose timestamps are too old "
                 "or too far ahead for its database: the scrape succeeds, the series stay empty",
                 Fix(out_of_bounds_fix(named.get("job"))), severity=Severity.advisory,
                 **{key: int(value) if key == "dropped" else value for key, value in named.items()})


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.prometheus_samples_out_of_bounds, OUT_OF_BOUNDS.pattern, _out_of_bounds, ADVISORY),
)
