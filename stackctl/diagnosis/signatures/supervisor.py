"""supervisord, which runs the native stack's processes: a program that exits when it should run
(and after its retries, the supervisor giving up on it), a command that is not there."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.model import Cause, Diagnosis, Fix
from stackctl.diagnosis.signature import ADVISORY, CONSEQUENCE, Signature, found, signature

_GAVE_UP = re.compile(r"gave up: (?P<program>[\w.-]+) entered FATAL state")
_EXIT = re.compile(r"exited: (?P<program>[\w.-]+) \(exit status (?P<status>\d+); not expected\)")
_MISSING = re.compile(r"can't find command '(?P<command>[^']+)'")


def _supervisor_gave_up(evidence: Evidence) -> Diagnosis:
    program = evidence.read(_GAVE_UP).get("program") or evidence.read(_EXIT).get("program", "")
    gave_up = bool(evidence.read(_GAVE_UP))
    statuses = [match.group("status") for line in evidence.lines for match in _EXIT.finditer(line)
                if not program or match.group("program") == program]
    status = statuses[-1] if statuses else None
    if status == "127":
        return found(evidence, Cause.supervisor_gave_up,
                     f"{program} exits at once with status 127: its command was not found",
                     Fix("the program's command is not installed where supervisord looks: for vLLM that is the "
                         "engine venv (`stackctl install-engine`); `stackctl doctor` checks the others"),
                     program=program, exit_status=127)
    shown = f" (exit status {status})" if status else ""
    what = (f"supervisord gave up on {program or 'a program'}: it kept exiting right after start{shown}" if gave_up
            else f"{program} exited when it should keep running{shown}")
    return found(evidence, Cause.supervisor_gave_up, what,
                 Fix(f"the program's own log says why: `stackctl logs {program or 'SERVICE'} --explain`; fix that and "
                     "`stackctl up` (supervisord restarts it)"),
                 **({"program": program} if program else {}), **({"exit_status": int(status)} if status else {}))


def _supervisor_command_missing(evidence: Evidence) -> Diagnosis:
    command = evidence.read(_MISSING).get("command", "")
    return found(evidence, Cause.supervisor_command_missing,
                 f"supervisord cannot find the command {command or 'of a program'}",
                 Fix("install what the program runs: for vLLM the engine venv (`stackctl install-engine`; "
                     "`stackctl doctor` says which engine the stack needs), for nginx/prometheus/node-exporter their "
                     "Debian packages (scripts/setup); then `stackctl up`"), **({"command": command} if command else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.supervisor_command_missing, r"can't find command '", _supervisor_command_missing),
    signature(Cause.supervisor_gave_up, r"gave up: [\w.-]+ entered FATAL state", _supervisor_gave_up, CONSEQUENCE),
    signature(Cause.supervisor_gave_up, r"exited: [\w.-]+ \(exit status \d+; not expected\)", _supervisor_gave_up,
              ADVISORY + 1),
)
