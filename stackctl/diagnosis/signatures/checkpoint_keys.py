"""A quantized checkpoint's parameter (a weight scale, a zero point) vLLM's weight loader has no place for: the
checkpoint's format is newer than the vLLM that loads it."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.quantized_checkpoint_keys import (
    QUANTIZATION_KEY,
    quantization_key,
    quantization_key_fix,
)
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _quantization_key(evidence: Evidence) -> Diagnosis:
    match = quantization_key(evidence.line)
    if match is None:
        raise ValueError("no quantization parameter on this line")
    name, param = match["name"], match["param"]
    return found(evidence, Cause.engine_too_old_for_model,
                 f"vLLM's weight loader has no parameter for {name}: the checkpoint's quantization format is newer "
                 "than this vLLM", Fix(quantization_key_fix(name, param), key="images.vllm"), parameter=name)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.engine_too_old_for_model, unnamed(QUANTIZATION_KEY), _quantization_key),
)
