"""A model's safetensors file cut short or not one at all (weight_files)."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix
from stackctl.diagnosis.weight_files import (
    CORRUPT_WEIGHTS,
    corrupt_weights_fix,
    corrupt_weights_reason,
)


def _model_weights_corrupt(evidence: Evidence) -> Diagnosis:
    reason = corrupt_weights_reason(evidence.text) or "MetadataIncompleteBuffer"
    return found(evidence, Cause.model_weights_corrupt,
                 f"a safetensors file of the model cannot be read ({reason}): it is cut short or not a safetensors file",
                 Fix(corrupt_weights_fix(reason), key="vllm.model_path"), error=reason)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.model_weights_corrupt, unnamed(CORRUPT_WEIGHTS), _model_weights_corrupt),
)
