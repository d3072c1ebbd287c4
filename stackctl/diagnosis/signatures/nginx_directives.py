"""nginx's "unknown directive" by its cause (nginx_directives): a directive of a newer nginx (http2 before
1.25.1, http3/quic before 1.25.0) apart from a module's directive not loaded, or a typo."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.nginx_directives import (
    UNKNOWN_DIRECTIVE,
    newer_directive_fix,
    unknown_directive,
    unknown_directive_fix,
)
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _nginx_unknown_directive(evidence: Evidence) -> Diagnosis:
    directive = unknown_directive(evidence.text)
    assert directive is not None  # the trigger matched
    place = {"file": directive.file, "line": directive.line} if directive.file else {}
    if directive.since:
        return found(evidence, Cause.nginx_directive_too_new,
                     f"nginx refuses its configuration: \"{directive.name}\" is a directive of nginx {directive.since} "
                     "and later, and this nginx is older",
                     Fix(newer_directive_fix(directive)), directive=directive.name, since=directive.since, **place)
    return found(evidence, Cause.nginx_directive_unknown,
                 f"nginx refuses its configuration: no module it loads knows the directive \"{directive.name}\"",
                 Fix(unknown_directive_fix(directive)), directive=directive.name, **place)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.nginx_directive_unknown, unnamed(UNKNOWN_DIRECTIVE), _nginx_unknown_directive),
)
