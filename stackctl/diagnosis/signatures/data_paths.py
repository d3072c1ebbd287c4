"""Prometheus's data directory at a relative path it may not create: the working directory decides where it is."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.prometheus_data_paths import (
    RELATIVE_DATA_PATH,
    relative_data_path,
    relative_data_path_fix,
)
from stackctl.diagnosis.signature import ROOT_CAUSE, Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _relative_data_path(evidence: Evidence) -> Diagnosis:
    match = relative_data_path(evidence.line)
    if match is None:
        raise ValueError("no relative data path on this line")
    path = match["path"]
    return found(evidence, Cause.prometheus_data_path_relative,
                 f"Prometheus cannot create its data directory `{path}` ({match['reason']}): the path is relative, so "
                 "it lies in whatever directory Prometheus was started in", Fix(relative_data_path_fix(path)),
                 path=path)


SIGNATURES: tuple[Signature, ...] = (
    # Heavier than the storage permission (monitoring), which reads "Opening storage failed ... permission denied".
    signature(Cause.prometheus_data_path_relative, unnamed(RELATIVE_DATA_PATH), _relative_data_path, ROOT_CAUSE + 1),
)
