"""TLS files nginx finds but cannot use: an encrypted private key, an empty or malformed dhparam file."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.nginx_tls_files import (
    DHPARAM_INVALID,
    ENCRYPTED_KEY,
    dhparam_fix,
    encrypted_key,
    encrypted_key_fix,
    invalid_dhparam,
)
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _encrypted_key(evidence: Evidence) -> Diagnosis:
    path = encrypted_key(evidence.text) or ""
    return found(evidence, Cause.nginx_key_encrypted,
                 f"nginx cannot decrypt the private key {path or '(path not in the log)'}: it is protected by a "
                 "passphrase nginx cannot ask for, so it does not start",
                 Fix(encrypted_key_fix(path), key="letsencrypt_dir"), **({"key_file": path} if path else {}))


def _dhparam_invalid(evidence: Evidence) -> Diagnosis:
    path = invalid_dhparam(evidence.text) or ""
    return found(evidence, Cause.nginx_dhparam_invalid,
                 f"nginx cannot read Diffie-Hellman parameters from {path}: the ssl_dhparam file is empty or not PEM, "
                 "so it does not start",
                 Fix(dhparam_fix(path)), dhparam=path)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.nginx_key_encrypted, unnamed(ENCRYPTED_KEY), _encrypted_key),
    signature(Cause.nginx_dhparam_invalid, unnamed(DHPARAM_INVALID), _dhparam_invalid),
)
