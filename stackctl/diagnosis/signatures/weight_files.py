"""A model's safetensors file cut short or not one at all (weight_files), and a checkpoint with no weight files in
the format vLLM was told to load."""

from __future__ import annotations

import re

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


# vLLM's loader found no file of the format it loads (--load-format safetensors: *.safetensors only; auto: those,
# else *.bin/*.pt) in the checkpoint directory (vllm#3329: a .bin-only checkpoint under --load-format safetensors).
_NO_WEIGHTS = re.compile(r"Cannot find any model weights with [`'\"]?(?P<path>[^`'\"\s]+)")


def _model_weights_not_found(evidence: Evidence) -> Diagnosis:
    path = evidence.read(_NO_WEIGHTS).get("path", "")
    at = f" in {path}" if path else ""
    return found(evidence, Cause.model_weights_not_found,
                 f"vLLM found no weight files{at} of the format it was told to load",
                 Fix(f"the checkpoint{at} has no weight files in the format vLLM loads: with --load-format safetensors "
                     "it loads only .safetensors files, and a checkpoint that ships only pytorch_model*.bin has none: "
                     "remove --load-format from vllm.extra_args (auto loads .bin too), or use the model's safetensors "
                     "checkpoint (vllm.model_path); where the directory holds no weights at all (`ls` it), the download "
                     "stopped early: download the model again", key="vllm.extra_args", flag="--load-format"),
                 **({"path": path} if path else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.model_weights_not_found, r"Cannot find any model weights with", _model_weights_not_found),
    signature(Cause.model_weights_corrupt, unnamed(CORRUPT_WEIGHTS), _model_weights_corrupt),
)
