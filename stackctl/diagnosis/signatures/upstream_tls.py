"""nginx's TLS handshake with an https:// upstream: a plain-HTTP upstream ("wrong version number"), an upstream
that refuses the handshake (alert 40 or 112: most often the server name, SNI, nginx does not send)."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.nginx_upstream_tls import (
    NOT_TLS,
    REFUSED,
    not_tls,
    not_tls_fix,
    refused,
    refused_fix,
)
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity


def _not_tls(evidence: Evidence) -> Diagnosis:
    upstream = not_tls(evidence.text) or ""
    return found(evidence, Cause.nginx_upstream_not_tls,
                 f"nginx speaks TLS to the upstream {upstream or '(not named in the log)'}, which answers in plain HTTP: "
                 "its requests fail with 502", Fix(not_tls_fix(upstream)), severity=Severity.advisory,
                 **({"upstream": upstream} if upstream else {}))


def _refused(evidence: Evidence) -> Diagnosis:
    match = refused(evidence.text)
    if match is None:
        raise ValueError("the refusal is not on this line")
    upstream = match["upstream"] or ""
    return found(evidence, Cause.nginx_upstream_tls_refused,
                 f"the upstream {upstream or '(not named in the log)'} refused nginx's TLS handshake (alert "
                 f"{match['alert']}): its requests fail with 502", Fix(refused_fix(match)), severity=Severity.advisory,
                 alert=int(match["alert"]), **({"upstream": upstream} if upstream else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.nginx_upstream_not_tls, unnamed(NOT_TLS), _not_tls),
    signature(Cause.nginx_upstream_tls_refused, unnamed(REFUSED), _refused),
)
