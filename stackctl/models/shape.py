"""A model's shape, read offline from its config.json in the local Hugging Face cache.

Only what memory planning needs: which layers keep a growing KV cache (full attention), which
keep a bounded one (sliding window) and which keep a fixed recurrent state (Gated DeltaNet,
Mamba), plus a parameter count for the weight size.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

GIB = 1024**3

# Bytes per element of a weight format. MXFP4: 4-bit values plus one 8-bit scale per 32.
_DTYPE_BYTES = {"bfloat16": 2.0, "float16": 2.0, "float32": 4.0, "fp8": 1.0, "mxfp4": 4.25 / 8}
_RECURRENT_TYPES = {"linear_attention", "mamba", "mamba2", "conv", "recurrent"}
_SLIDING_TYPES = {"sliding_attention", "sliding_window", "swa_attention", "chunked_attention"}


@dataclass(frozen=True)
class ModelShape:
    model_type: str
    layers: int
    full_attention_layers: int
    sliding_layers: int
    sliding_window: int | None
    recurrent_layers: int
    kv_heads: int
    head_dim: int
    # Recurrent state of one layer for one sequence, bytes (conv state + SSM/delta state).
    recurrent_state_bytes: int
    max_position_embeddings: int | None
    parameters: int
    weight_bytes: int

    @property
    def hybrid(self) -> bool:
        return self.recurrent_layers > 0

    def kv_bytes_per_token(self, kv_cache_dtype: str | None = None) -> int:
        """Growing KV cache per token: full-attention layers only; fp8 KV halves it."""
        element = 1 if (kv_cache_dtype or "auto").startswith("fp8") else 2
        return self.full_attention_layers * 2 * self.kv_heads * self.head_dim * element

    def fixed_bytes_per_sequence(self, kv_cache_dtype: str | None = None) -> int:
        """What a sequence holds regardless of its length: recurrent states, sliding windows."""
        element = 1 if (kv_cache_dtype or "auto").startswith("fp8") else 2
        window = self.sliding_layers * (self.sliding_window or 0) * 2 * self.kv_heads * self.head_dim * element
        return self.recurrent_layers * self.recurrent_state_bytes + window


def snapshot_dirs(hf_cache: Path, hf_id: str) -> list[Path]:
    """`<hf_cache>/hub/models--ORG--NAME/snapshots/*`, newest first."""
    repo = Path(hf_cache).expanduser() / "hub" / ("models--" + hf_id.replace("/", "--"))
    snapshots = [path for path in (repo / "snapshots").glob("*") if path.is_dir()]
    return sorted(snapshots, key=lambda path: path.stat().st_mtime, reverse=True)


def find_config(hf_cache: Path, hf_id: str) -> Path | None:
    for snapshot in snapshot_dirs(hf_cache, hf_id):
        if (snapshot / "config.json").is_file():
            return snapshot / "config.json"
    return None


def weight_bytes_in_snapshot(snapshot: Path) -> int | None:
    """The checkpoint's size as published (safetensors index) or as downloaded (shard files)."""
    index = snapshot / "model.safetensors.index.json"
    if index.is_file():
        try:
            total = json.loads(index.read_text()).get("metadata", {}).get("total_size")
        except ValueError:
            total = None
        if isinstance(total, int | float) and total > 0:
            return int(total)
    shards = list(snapshot.glob("*.safetensors"))
    return sum(path.stat().st_size for path in shards) if shards else None


def downloaded_bytes(hf_cache: Path, hf_id: str) -> int:
    """Bytes of this model already in the cache (blobs, incomplete downloads included)."""
    blobs = Path(hf_cache).expanduser() / "hub" / ("models--" + hf_id.replace("/", "--")) / "blobs"
    return sum(path.stat().st_size for path in blobs.glob("*") if path.is_file())


def load_config(path: Path) -> dict:
    return json.loads(Path(path).read_text())


def model_shape(config: dict) -> ModelShape:
    """Read a (possibly multimodal, `text_config`-wrapped) Hugging Face config.json."""
    text = {**config, **(config.get("text_config") or {})}
    layers = int(text["num_hidden_layers"])
    kinds = _layer_kinds(text, layers)
    heads = int(text["num_attention_heads"])
    kv_heads = int(text.get("num_key_value_heads") or heads)
    head_dim = int(text.get("head_dim") or text["hidden_size"] // heads)
    full = sum(kind == "full" for kind in kinds)
    sliding = sum(kind == "sliding" for kind in kinds)
    recurrent = sum(kind == "recurrent" for kind in kinds)
    parameters, weight_bytes = _parameters_and_bytes(config, text, kinds)
    return ModelShape(
        model_type=str(text.get("model_type") or config.get("model_type") or "?"),
        layers=layers,
        full_attention_layers=full,
        sliding_layers=sliding,
        sliding_window=int(text["sliding_window"]) if sliding and text.get("sliding_window") else None,
        recurrent_layers=recurrent,
        kv_heads=kv_heads,
        head_dim=head_dim,
        recurrent_state_bytes=_recurrent_state_bytes(text) if recurrent else 0,
        max_position_embeddings=text.get("max_position_embeddings"),
        parameters=parameters,
        weight_bytes=weight_bytes,
    )


def _layer_kinds(text: dict, layers: int) -> list[str]:
    """'full' | 'sliding' | 'recurrent' per layer, from the fields real configs use."""
    if isinstance(text.get("layer_types"), list) and len(text["layer_types"]) == layers:
        return [_kind(str(name)) for name in text["layer_types"]]
    interval = text.get("full_attention_interval")
    if interval:  # Qwen3-Next / Qwen3.5: every Nth layer is full attention, the rest Gated DeltaNet
        return ["full" if (index + 1) % int(interval) == 0 else "recurrent" for index in range(layers)]
    pattern = text.get("hybrid_override_pattern")
    if isinstance(pattern, str) and len(pattern) == layers:  # Nemotron-H: M mamba, * attention, - / E mlp
        return ["full" if char == "*" else "recurrent" if char == "M" else "none" for char in pattern]
    indices = text.get("attn_layer_indices")
    if isinstance(indices, list):  # Bamba / Granite hybrids
        return ["full" if index in indices else "recurrent" for index in range(layers)]
    return ["full"] * layers


def _kind(name: str) -> str:
    if name in _RECURRENT_TYPES:
        return "recurrent"
    if name in _SLIDING_TYPES:
        return "sliding"
    return "full"


def _recurrent_state_bytes(text: dict) -> int:
    """Gated DeltaNet: conv state (conv_dim x (kernel - 1)) + delta state (V heads x dk x dv)."""
    key_heads = int(text.get("linear_num_key_heads") or 0)
    value_heads = int(text.get("linear_num_value_heads") or 0)
    if key_heads and value_heads:
        key_dim = key_heads * int(text["linear_key_head_dim"])
        value_dim = value_heads * int(text["linear_value_head_dim"])
        conv = (2 * key_dim + value_dim) * (int(text.get("linear_conv_kernel_dim", 4)) - 1) * 2
        state_element = 4 if str(text.get("mamba_ssm_dtype", "float32")) == "float32" else 2
        ssm = value_heads * int(text["linear_key_head_dim"]) * int(text["linear_value_head_dim"]) * state_element
        return conv + ssm
    # Mamba-2: conv over (inner + 2 * groups * state), SSM heads x head_dim x state (fp32)
    heads = int(text.get("mamba_num_heads") or 0)
    if heads:
        head_dim = int(text["mamba_head_dim"])
        state = int(text.get("ssm_state_size") or text.get("mamba_d_state") or 128)
        groups = int(text.get("n_groups", 1))
        conv = (heads * head_dim + 2 * groups * state) * (int(text.get("conv_kernel", 4)) - 1) * 2
        return conv + heads * head_dim * state * 4
    return 0


def _parameters_and_bytes(config: dict, text: dict, kinds: list[str]) -> tuple[int, int]:
    """Language-model parameters from the config, and their bytes in the checkpoint's format.

    Leaves out vision encoders and multi-token-prediction heads: the estimate runs a few percent
    under the published checkpoint size for multimodal Qwen3.5/3.6 (stated in the unit tests).
    """
    hidden = int(text["hidden_size"])
    vocab = int(text["vocab_size"])
    heads = int(text["num_attention_heads"])
    kv_heads = int(text.get("num_key_value_heads") or heads)
    head_dim = int(text.get("head_dim") or hidden // heads)
    gate = 2 if text.get("attn_output_gate") or str(text.get("model_type", "")).startswith(("qwen3_next", "qwen3_5")) else 1
    attention = hidden * heads * head_dim * gate + 2 * hidden * kv_heads * head_dim + heads * head_dim * hidden
    if text.get("attention_bias"):
        attention += heads * head_dim + 2 * kv_heads * head_dim + hidden
    recurrent = 0
    if text.get("linear_num_key_heads"):
        key_dim = int(text["linear_num_key_heads"]) * int(text["linear_key_head_dim"])
        value_dim = int(text["linear_num_value_heads"]) * int(text["linear_value_head_dim"])
        conv_dim = 2 * key_dim + value_dim
        recurrent = (hidden * conv_dim + hidden * value_dim + 2 * hidden * int(text["linear_num_value_heads"])
                     + conv_dim * int(text.get("linear_conv_kernel_dim", 4)) + value_dim * hidden)
    experts = int(text.get("num_experts") or text.get("num_local_experts") or text.get("n_routed_experts")
                  or text.get("num_routed_experts") or 0)
    if experts:
        expert_size = int(text.get("moe_intermediate_size") or text["intermediate_size"])
        expert_params = experts * 3 * hidden * expert_size
        if text.get("model_type") == "gpt_oss":  # fused gate_up and down carry biases
            expert_params += experts * (2 * expert_size + hidden)
        shared_size = int(text.get("shared_expert_intermediate_size") or 0)
        dense_ffn = 3 * hidden * shared_size + (hidden if shared_size else 0)
        router = experts * hidden
    else:
        expert_params, router = 0, 0
        dense_ffn = 3 * hidden * int(text["intermediate_size"])
    embeddings = vocab * hidden * (1 if text.get("tie_word_embeddings", config.get("tie_word_embeddings")) else 2)

    layers_attention = sum(kind in {"full", "sliding"} for kind in kinds)
    layers_recurrent = sum(kind == "recurrent" for kind in kinds)
    layers = len(kinds)
    expert_total = layers * expert_params
    other_linear = layers_attention * attention + layers_recurrent * recurrent + layers * dense_ffn
    small = layers * (router + 2 * hidden) + hidden
    parameters = embeddings + expert_total + other_linear + small

    quantization = config.get("quantization_config") or text.get("quantization_config") or {}
    method = str(quantization.get("quant_method", "")).lower()
    base = _DTYPE_BYTES.get(str(text.get("torch_dtype") or config.get("torch_dtype") or "bfloat16"), 2.0)
    if method == "mxfp4":  # gpt-oss: MoE experts in MXFP4, everything else BF16
        weight_bytes = expert_total * _DTYPE_BYTES["mxfp4"] + (parameters - expert_total) * base
    elif method == "fp8":  # linear layers in FP8; embeddings, lm_head, routers and norms stay BF16
        weight_bytes = (expert_total + other_linear) * 1.0 + (embeddings + small) * base
    elif method in {"gptq", "awq"}:  # packed N-bit linear layers plus one fp16 scale (and zero) per group
        bits = int(quantization.get("bits") or quantization.get("w_bit") or 4)
        group = int(quantization.get("group_size") or quantization.get("q_group_size") or 128)
        per_weight = bits / 8 + (2 + bits / 8) / max(1, group if group > 0 else 4096)
        weight_bytes = (expert_total + other_linear) * per_weight + (embeddings + small) * base
    else:
        weight_bytes = parameters * base
    return int(parameters), int(weight_bytes)
