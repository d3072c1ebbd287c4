"""A key the Compose that ran does not have in its file format: one a later Compose added (the top-level `name:`, a
service's `develop:`), or a typo or a misplaced key."""

from __future__ import annotations

from stackctl.diagnosis.compose_file_keys import (
    ADDITIONAL_PROPERTY,
    GPU_DEVICES,
    additional_property,
    newer_key_fix,
    newer_release,
    unknown_key_fix,
)
from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _compose_key(evidence: Evidence) -> Diagnosis:
    refusal = additional_property(evidence.line)
    if refusal is None or refusal[1] == GPU_DEVICES:
        raise ValueError("no key refused on this line, or a GPU reservation's (compose-too-old reads it)")
    where, key = refusal
    release = newer_release(where, key)
    values = {"key": key, **({"where": where} if where else {})}
    if release:
        return found(evidence, Cause.compose_too_old,
                     f"docker compose refuses the file's `{key}:`, a key Compose {release} added: this Compose is older "
                     "than the file", Fix(newer_key_fix(key, release)), release=release, **values)
    return found(evidence, Cause.compose_key_unknown,
                 f"docker compose refuses the file: `{key}`{f' under {where}' if where else ''} is no key of the "
                 "Compose file format there", Fix(unknown_key_fix(where, key)), **values)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.compose_key_unknown, unnamed(ADDITIONAL_PROPERTY), _compose_key),
)
