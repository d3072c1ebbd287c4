"""node-exporter's textfile collector denied a .prom file (a warning: the rest is served)."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.node_textfiles import (
    PROM_FILE_DENIED,
    TEXTFILE_ERROR,
    textfile_denied,
    textfile_fix,
)
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity


def _textfile_denied(evidence: Evidence) -> Diagnosis:
    # The record's own line, or the line with the file's name where a paste wrapped it.
    path = textfile_denied(evidence.line) or textfile_denied(evidence.text)
    if path is None:
        raise ValueError("no permission denied on this line")
    return found(evidence, Cause.node_exporter_textfile_unreadable,
                 f"node-exporter's textfile collector may not read {path}: its metrics are missing",
                 Fix(f"{textfile_fix(path)}; then `stackctl up`"), severity=Severity.advisory, path=path)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.node_exporter_textfile_unreadable, unnamed(TEXTFILE_ERROR, PROM_FILE_DENIED), _textfile_denied),
)
