"""A process's open-file limit (open_files): reached while running, supervisord's minfds above what its
environment allows, systemd refusing a unit's LimitNOFILE."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.open_files import (
    LIMIT_REFUSED,
    MINFDS,
    TOO_MANY_OPEN,
    open_files_fix,
    open_files_limit,
)
from stackctl.diagnosis.signature import CONSEQUENCE, Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix

_CAUSES = {"exhausted": Cause.open_files_exhausted, "minfds": Cause.supervisor_minfds_above_limit,
           "refused": Cause.systemd_limit_refused}


def _open_files(evidence: Evidence) -> Diagnosis:
    # The systemd pair: the limit's own line names which Limit*= it refused; read it where the LIMITS line matched.
    limit = open_files_limit(evidence.text)
    if limit is None:  # a warning that the limit could cause it, not the failure: the next reading takes the line
        raise ValueError("no open-files failure")
    if limit.kind == "refused" and not limit.detail.startswith("Limit"):
        named = next((found_ for line in evidence.lines if (found_ := open_files_limit(line))
                      and found_.detail.startswith("Limit")), None)
        limit = named or limit
    service = evidence.context.service
    summaries = {
        "exhausted": f"{service} ran out of file descriptors (too many open files): its open-files limit is too low",
        "minfds": "supervisord's minfds is above the open-files limit its environment allows, so it does not start",
        "refused": f"systemd could not set {limit.detail or 'a resource limit'} for the unit, so it did not start it",
    }
    values: dict[str, str | float] = {"limit": limit.detail} if limit.detail else {}
    if limit.minimum:
        values["minfds"] = limit.minimum
    return found(evidence, _CAUSES[limit.kind], summaries[limit.kind], Fix(open_files_fix(limit, service)), **values)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.supervisor_minfds_above_limit, unnamed(MINFDS), _open_files),
    signature(Cause.systemd_limit_refused, unnamed(LIMIT_REFUSED), _open_files),
    # Running out is often the consequence of a leak or a flood a line above names.
    signature(Cause.open_files_exhausted, TOO_MANY_OPEN.pattern, _open_files, CONSEQUENCE),
)
