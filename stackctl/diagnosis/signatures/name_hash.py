"""nginx's server-name hash that does not fit: the bucket (or the hash) size to set."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.nginx_name_hash import HASH_TOO_SMALL, bucket_size, hash_fix, hash_too_small
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _hash_too_small(evidence: Evidence) -> Diagnosis:
    match = hash_too_small(evidence.text)
    if match is None:
        raise ValueError("the refusal is not on this line")
    larger = bucket_size(match)
    return found(evidence, Cause.nginx_server_names_hash,
                 f"nginx's hash of server names does not fit its {match['bucket']}-byte buckets"
                 + (f" or its size of {match['max_size']}" if match["max_size"] else "") + ", so nginx does not start",
                 Fix(hash_fix(match), value=str(larger)), bucket=int(match["bucket"]), suggested=larger)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.nginx_server_names_hash, unnamed(HASH_TOO_SMALL), _hash_too_small),
)
