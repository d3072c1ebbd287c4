"""A quantized checkpoint's parameter vLLM's weight loader has no place for: "KeyError:
'layers.0.mlp.down_proj.weight_scale'" from a model's load_weights (params_dict[name]). Read by the
engine-too-old-for-model signature and by the fallback alike.

llm-compressor (compressed-tensors) writes each quantized layer's scales, zero points and packed weights beside its
weight; a vLLM older than the checkpoint's scheme builds the model without those parameters, and its loader stops on
the first one: llm-compressor#959 (an FP8 Qwen2 checkpoint refused by vLLM 0.6.4, loaded by 0.6.6) and
llm-compressor#967 (kv-cache scales a starcoder2 loader did not remap, fixed in a later vLLM). The cure is a newer
vLLM. A KeyError on a plain weight (a checkpoint in another layout, Mistral's consolidated files) is not this.
"""

from __future__ import annotations

import re

# The parameters compressed-tensors, FP8 and kv-cache quantization store beside a layer's weight.
QUANTIZATION_KEY = re.compile(
    r"KeyError: '(?P<name>[\w.]+\.(?P<param>weight_scale|weight_zero_point|weight_global_scale|weight_packed"
    r"|weight_shape|weight_g_idx|input_scale|input_global_scale|k_scale|v_scale))'")


def quantization_key(text: str) -> re.Match[str] | None:
    """The quantization parameter vLLM's loader refused, or None."""
    return QUANTIZATION_KEY.search(text)


def quantization_key_fix(name: str, param: str) -> str:
    return (f"this vLLM builds the model without a parameter for `{name}` ({param}), which the checkpoint stores: the "
            "checkpoint's quantization format (a compressed-tensors checkpoint from llm-compressor, an FP8 or kv-cache "
            "scale) is newer than the vLLM that loads it. Upgrade vLLM: set images.vllm in stack.yaml to a newer vLLM "
            "release (`stackctl install-engine` for the native runtime); the checkpoint's config.json names its scheme "
            "under quantization_config (quant_method, format, version). If the newest vLLM still refuses it, its loader "
            "for this model lacks that scheme: report it to vLLM, or quantize with the llm-compressor release that "
            "matches your vLLM")
