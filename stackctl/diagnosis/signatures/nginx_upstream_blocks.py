"""nginx refusing a second upstream block of one name (`duplicate upstream "NAME"`)."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.nginx_upstream_blocks import (
    DUPLICATE_UPSTREAM,
    duplicate_upstream,
    duplicate_upstream_fix,
    is_stackctl_upstream,
)
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _duplicate_upstream(evidence: Evidence) -> Diagnosis:
    match = duplicate_upstream(evidence.text)
    if match is None:
        raise KeyError("name")
    name, file = match["name"], match["file"] or ""
    where = f" ({file}{':' + match['line'] if match['line'] else ''})" if file else ""
    return found(evidence, Cause.nginx_duplicate_upstream,
                 f"nginx refuses a second upstream block named {name}{where}, so it does not start",
                 Fix(duplicate_upstream_fix(name, file), key="ports.proxy" if is_stackctl_upstream(name) else None),
                 upstream=name, **({"file": file} if file else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.nginx_duplicate_upstream, unnamed(DUPLICATE_UPSTREAM), _duplicate_upstream),
)
