"""A certificate (or key) file whose PEM blocks do not decode: OpenSSL's ASN.1 refusal, as nginx reports it."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.nginx_certificate_encoding import (
    ASN1_REFUSED,
    asn1_refused,
    asn1_refused_fix,
    refused_file,
)
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _asn1_refused(evidence: Evidence) -> Diagnosis:
    match = asn1_refused(evidence.text)
    if match is None:
        raise ValueError("the refusal is not on this line")
    path, what = refused_file(match)
    return found(evidence, Cause.nginx_certificate_invalid,
                 f"nginx could not decode the {what} in {path or 'its file'} (ASN.1: wrong tag): the PEM markers are "
                 "there but the file holds something else besides or between them, so nginx does not start",
                 Fix(asn1_refused_fix(path, what), key="letsencrypt_dir"), **({"path": path} if path else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.nginx_certificate_invalid, unnamed(ASN1_REFUSED), _asn1_refused),
)
