"""nginx's proxy_pass with a URI part where the location cannot take one (nginx_proxy_pass)."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.nginx_proxy_pass import URI_IN_REGEX, proxy_pass_fix, proxy_pass_place
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _nginx_proxy_pass_uri_in_regex(evidence: Evidence) -> Diagnosis:
    file, number = proxy_pass_place(evidence.text)
    return found(evidence, Cause.nginx_proxy_pass_uri_in_regex,
                 "nginx refuses its configuration: a proxy_pass with a path after the address stands in a regular "
                 "expression location (or a named location, an `if` or `limit_except` block), which cannot take one",
                 Fix(proxy_pass_fix(file, number)), **({"file": file, "line": number} if file else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.nginx_proxy_pass_uri_in_regex, unnamed(URI_IN_REGEX), _nginx_proxy_pass_uri_in_regex),
)
