"""An exporter's web configuration file (--web.config.file) with a key its type does not know: a key at the wrong
level (mostly its indentation), invisible whitespace from a copy-paste, or another file given in its place
(exporter_web_config). The exporter does not start."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.exporter_web_config import FIELD_UNKNOWN, fields_fix, unknown_fields
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _web_config_field_unknown(evidence: Evidence) -> Diagnosis:
    fields = [field for line in evidence.lines for field in unknown_fields(line)]
    if not fields:
        raise ValueError("no field on this line")
    names = ", ".join(dict.fromkeys(field.strip() for field, _type in fields))
    return found(evidence, Cause.web_config_field_unknown,
                 f"{evidence.context.service}'s web configuration file (--web.config.file) has a key where its type "
                 f"does not take it ({names}), so it does not start",
                 Fix(fields_fix(fields)), fields=names)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.web_config_field_unknown, unnamed(FIELD_UNKNOWN), _web_config_field_unknown),
)
