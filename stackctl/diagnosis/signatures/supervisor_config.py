"""supervisord's configuration file it cannot parse (supervisor_config): a file without its section header,
a line that is no setting, quotation marks kept in a value, a value of the wrong kind."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature
from stackctl.diagnosis.supervisor_config import CONFIG_INVALID, config_error, config_fix
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _supervisor_config_invalid(evidence: Evidence) -> Diagnosis:
    error = config_error(evidence.text)
    assert error is not None  # the trigger matched
    named = f" {error.file}" if error.file else ""
    return found(evidence, Cause.supervisor_config_invalid,
                 f"supervisord cannot parse its configuration file{named} ({error.kind})",
                 Fix(config_fix(error)), error=error.kind, **({"file": error.file} if error.file else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.supervisor_config_invalid, CONFIG_INVALID.pattern, _supervisor_config_invalid),
)
