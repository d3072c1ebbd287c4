"""A model and --quantization that do not fit: a method asked of a checkpoint not quantized with it
(no quantization config in the model), a method other than the checkpoint's own, and a method this
vLLM predates."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix

_CONFIG_MISSING = re.compile(r"Cannot find the config file for (?P<method>[\w-]+)")
_UNKNOWN_METHOD = re.compile(r"Unknown quantization method: (?P<method>[\w-]*)\. Must be one of \[(?P<known>[^\]]*)\]")


def _quantization_config_missing(evidence: Evidence) -> Diagnosis:
    method = evidence.read(_CONFIG_MISSING).get("method", "")
    return found(evidence, Cause.quantization_config_missing,
                 f"--quantization {method or 'METHOD'} was asked of a model that is not quantized with it: vLLM does "
                 "not quantize, it loads weights already quantized, and this model has no quantization config",
                 Fix(f"either serve a pre-quantized model ({method.upper() or 'AWQ/GPTQ'} checkpoints carry their "
                     "quantization config: set model (or vllm.model_path) in stack.yaml to one, or quantize yours "
                     "first with AutoAWQ / GPTQModel), or remove --quantization "
                     f"{method or 'METHOD'} from vllm.extra_args to serve the model unquantized "
                     "(a quantized model's method is read from its config without the flag)",
                     key="model", flag="--quantization"), **({"method": method} if method else {}))


def _quantization_method_unknown(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_UNKNOWN_METHOD)
    method = values.get("method", "")
    known = ", ".join(name.strip(" '\"") for name in values.get("known", "").split(",") if name.strip(" '\""))
    if not method:
        return found(evidence, Cause.quantization_method_unknown,
                     "the model's quantization config names no method this vLLM knows (an empty quant_method)",
                     Fix("the checkpoint's config.json quantization_config (or hf_quant_config.json) was written by "
                         "a tool this vLLM cannot read: use a newer vLLM (images.vllm in stack.yaml; natively "
                         "`stackctl install-engine` after upgrading) or a checkpoint exported for vLLM",
                         key="images.vllm"), **({"known": known} if known else {}))
    return found(evidence, Cause.quantization_method_unknown,
                 f"this vLLM predates the quantization method {method}" + (f" (it knows: {known})" if known else ""),
                 Fix(f"upgrade to a newer vLLM that supports {method}: set images.vllm in stack.yaml to a current "
                     "image (natively: `pip install vllm -U` in the engine venv, or `stackctl install-engine`), or "
                     f"serve a model quantized with a method this one knows{' (' + known + ')' if known else ''}",
                     key="images.vllm"), method=method, **({"known": known} if known else {}))


_MISMATCH = re.compile(r"Quantization method specified in the model config \((?P<config>[\w-]+)\) does not match the "
                       r"quantization method specified in the `quantization` argument \((?P<flag>[\w-]+)\)")


def _quantization_mismatch(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_MISMATCH)
    config, flag = values.get("config", ""), values.get("flag", "")
    return found(evidence, Cause.quantization_mismatch,
                 f"--quantization {flag or 'METHOD'} does not match the checkpoint's own quantization "
                 f"({config or 'its config'}): vLLM refuses to load it",
                 Fix(f"remove --quantization from vllm.extra_args in stack.yaml: vLLM detects the quantization "
                     f"automatically from the checkpoint's config (and picks the faster kernel itself, e.g. "
                     f"gptq_marlin for a GPTQ model); or set --quantization {config or 'METHOD'}, the method the "
                     "config names", key="vllm.extra_args", flag="--quantization"),
                 **({"config": config} if config else {}), **({"flag": flag} if flag else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.quantization_config_missing, _CONFIG_MISSING.pattern, _quantization_config_missing),
    signature(Cause.quantization_mismatch, r"does not match the quantization method specified in the `quantization` "
              r"argument", _quantization_mismatch),
    signature(Cause.quantization_method_unknown, r"Unknown quantization method: [\w-]*\. Must be one of",
              _quantization_method_unknown),
)
