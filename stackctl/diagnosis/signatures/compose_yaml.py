"""A Compose file that does not parse as YAML: most often a web page saved in its place."""

from __future__ import annotations

from stackctl.diagnosis.compose_files import YAML_ERROR, compose_yaml_error, compose_yaml_fix
from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _compose_yaml(evidence: Evidence) -> Diagnosis:
    error = compose_yaml_error(evidence.text)
    if error is None:
        raise ValueError("no Compose file is named with this YAML error")
    return found(evidence, Cause.compose_file_invalid,
                 f"Compose cannot parse {error.file}: YAML's {error.message} at line {error.line}, column {error.column}",
                 Fix(f"{compose_yaml_fix(error)}; then start it again"),
                 file=error.file, line=error.line, column=error.column)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.compose_file_invalid, unnamed(YAML_ERROR), _compose_yaml),
)
