"""A healthcheck (or `docker exec`) running a command its image lacks: runc's refusal and the shell's."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.healthcheck_commands import (
    EXEC_REFUSED,
    SHELL_NOT_FOUND,
    command_missing,
    command_missing_fix,
    is_healthcheck,
)
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _command_missing(evidence: Evidence) -> Diagnosis:
    # The reason may be wrapped onto the next line of a paste: read the line with the ones after it.
    command = command_missing(evidence.text)
    if command is None:
        raise ValueError("an exec refused for another reason")
    healthcheck = is_healthcheck("\n".join(evidence.lines), command)
    name = command.rsplit("/", 1)[-1]
    return found(evidence, Cause.docker_healthcheck_command_missing,
                 (f"the container's healthcheck runs {name}, which its image does not have, so every check fails"
                  if healthcheck else f"{name} is not in the container's image, so Docker could not run it there"),
                 Fix(command_missing_fix(command, healthcheck)), command=name)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.docker_healthcheck_command_missing, unnamed(EXEC_REFUSED, SHELL_NOT_FOUND), _command_missing),
)
