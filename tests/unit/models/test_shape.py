"""KV cache per token and weight size from real model configs, against published figures.

The config.json files under tests/data/doctor/hf_cache were written from public model cards and
configs (each model's SOURCE.md says where every value came from); nothing here is downloaded.
"""

import pytest

from stackctl.models.shape import find_config, load_config, model_shape
from tests.support.fakehost import MODEL_CACHE

GB = 10**9
KIB = 1024


def shape_of(hf_id: str):
    path = find_config(MODEL_CACHE, hf_id)
    assert path is not None, hf_id
    return model_shape(load_config(path))


# (hf id, full-attention layers, recurrent layers, KV bytes/token bf16, published weight GB, tolerance)
# KV/token = full-attention layers x 2 (K and V) x KV heads x head dim x 2 bytes; the expected values
# are that product from each model card's architecture table, and for Qwen3-32B also the published
# "256 KiB per token". Weight tolerance: 1% for text-only checkpoints (the parameter count is
# exact); 5% for Qwen3.5/3.6/Next checkpoints, whose vision encoder and MTP head the estimate leaves out.
CASES = [
    ("Qwen/Qwen3.6-27B", 16, 48, 16 * 2 * 4 * 256 * 2, 55.56, 0.05),
    ("Qwen/Qwen3.6-35B-A3B-FP8", 10, 30, 10 * 2 * 2 * 256 * 2, 37.0, 0.05),
    ("Qwen/Qwen3-Coder-Next-FP8", 12, 36, 12 * 2 * 2 * 256 * 2, 82.1, 0.05),
    ("Qwen/Qwen3-32B", 64, 0, 256 * KIB, 65.52, 0.01),
    ("openai/gpt-oss-120b", 18, 0, 18 * 2 * 8 * 64 * 2, 65.28, 0.01),
]


@pytest.mark.parametrize(("hf_id", "full", "recurrent", "kv_bf16", "published_gb", "tolerance"), CASES)
def test_kv_per_token_and_weights_match_published_figures(hf_id, full, recurrent, kv_bf16, published_gb, tolerance):
    shape = shape_of(hf_id)
    assert shape.full_attention_layers == full
    assert shape.recurrent_layers == recurrent
    assert shape.hybrid == (recurrent > 0)
    assert shape.kv_bytes_per_token() == kv_bf16
    assert shape.kv_bytes_per_token("fp8") == kv_bf16 // 2  # fp8 KV halves it
    assert shape.weight_bytes == pytest.approx(published_gb * GB, rel=tolerance)


def test_parameter_counts_match_the_published_totals():
    # Qwen3-32B: HF safetensors metadata 32,762,123,264 (BF16); gpt-oss-120b: 116.8B (model card).
    assert shape_of("Qwen/Qwen3-32B").parameters == pytest.approx(32_762_123_264, rel=0.001)
    assert shape_of("openai/gpt-oss-120b").parameters == pytest.approx(116.83e9, rel=0.005)
    # Coder-Next: "80B total" (79.7B per the GGUF tensor count); 35B-A3B: "35B total".
    assert shape_of("Qwen/Qwen3-Coder-Next-FP8").parameters == pytest.approx(79.7e9, rel=0.01)
    assert shape_of("Qwen/Qwen3.6-35B-A3B-FP8").parameters == pytest.approx(35e9, rel=0.03)


def test_hybrid_state_matches_vllms_traced_reservation():
    """A vLLM-v0.29-pinned public test traces the per-sequence reservation of the Qwen3.6-27B
    geometry at 262,144 tokens, bf16 KV, prefix caching off: 17,366,515,712 bytes."""
    shape = shape_of("Qwen/Qwen3.6-27B")
    per_sequence = 262_144 * shape.kv_bytes_per_token() + shape.fixed_bytes_per_sequence()
    assert per_sequence == pytest.approx(17_366_515_712, rel=0.005)
    # Gated DeltaNet state: conv (2*16*128 + 48*128) x 3 x 2 B + delta 48 x 128 x 128 x 4 B (fp32)
    assert shape.recurrent_state_bytes == 10240 * 3 * 2 + 48 * 128 * 128 * 4


def test_sliding_window_layers_hold_a_bounded_cache():
    shape = shape_of("openai/gpt-oss-120b")
    assert (shape.sliding_layers, shape.sliding_window) == (18, 128)
    assert shape.fixed_bytes_per_sequence() == 18 * 128 * 2 * 8 * 64 * 2


def test_interval_only_configs_are_read_like_layer_types():
    """Qwen3-Next configs name the hybrid layout only through full_attention_interval."""
    config = load_config(find_config(MODEL_CACHE, "Qwen/Qwen3-Coder-Next-FP8"))
    assert "layer_types" not in config
    listed = dict(config, layer_types=["full_attention" if (i + 1) % 4 == 0 else "linear_attention" for i in range(48)])
    assert model_shape(listed) == model_shape(config)


def test_mamba_pattern_configs():
    nemotron = {
        "model_type": "nemotron_h", "num_hidden_layers": 6, "hybrid_override_pattern": "M-M*M-",
        "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128, "hidden_size": 2688,
        "vocab_size": 131072, "intermediate_size": 1024, "mamba_num_heads": 64, "mamba_head_dim": 64,
        "ssm_state_size": 128, "n_groups": 8, "conv_kernel": 4,
    }
    shape = model_shape(nemotron)
    assert (shape.full_attention_layers, shape.recurrent_layers) == (1, 3)
    assert shape.kv_bytes_per_token() == 2 * 2 * 128 * 2
    assert shape.recurrent_state_bytes == (64 * 64 + 2 * 8 * 128) * 3 * 2 + 64 * 64 * 128 * 4
