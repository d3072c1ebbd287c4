"""Model profiles: the vLLM flags each model family needs to serve coding agents correctly."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelProfile:
    name: str
    description: str
    # Hugging Face repo id; None for the locally generated demo model.
    hf_id: str | None
    served_name: str
    # Weight format: bf16 | fp8 | awq | mxfp4 (matched against hardware restrictions).
    quantization: str
    weights_gb: float
    max_model_len: int
    max_num_seqs: int
    # Qwen3 coder-style XML tool calls need `qwen3_coder`; `hermes` silently drops them.
    # None: no tool calling until one is chosen (a derived model of an unknown family).
    tool_call_parser: str | None
    reasoning_parser: str | None
    kv_cache_dtype: str | None = None
    # Hybrid (Gated DeltaNet / Mamba) models keep one fixed state slot per sequence: vLLM
    # must not schedule more sequences than the Mamba cache holds.
    hybrid: bool = False
    gated: bool = False
    gpu_only: bool = True
    extra_args: tuple[str, ...] = ()
    # config.json `architectures[0]`: what the engine must know (stackctl/profiles/compat.yaml).
    architecture: str | None = None


MODEL_PROFILES: dict[str, ModelProfile] = {
    profile.name: profile
    for profile in (
        ModelProfile(
            name="qwen3.6-27b",
            architecture="Qwen3_5ForConditionalGeneration",
            description="Qwen3.6-27B, BF16 weights, fp8 KV cache (hybrid, 262k context)",
            hf_id="Qwen/Qwen3.6-27B",
            served_name="qwen3.6-27b",
            quantization="bf16",
            weights_gb=55.6,
            max_model_len=131072,
            # Hybrid: one recurrent-state slot per sequence; 7 fit at full length on 96 GB
            # (`stackctl doctor` computes it from config.json), 6 leaves headroom.
            max_num_seqs=6,
            tool_call_parser="qwen3_coder",
            reasoning_parser="qwen3",
            kv_cache_dtype="fp8",
            hybrid=True,
        ),
        ModelProfile(
            name="qwen3.6-35b-a3b-fp8",
            architecture="Qwen3_5MoeForConditionalGeneration",
            description="Qwen3.6-35B-A3B, FP8 weights (hybrid MoE, 3B active)",
            hf_id="Qwen/Qwen3.6-35B-A3B-FP8",
            served_name="qwen3.6-35b-a3b",
            quantization="fp8",
            weights_gb=37.5,
            max_model_len=131072,
            max_num_seqs=16,
            tool_call_parser="qwen3_coder",
            reasoning_parser="qwen3",
            kv_cache_dtype="fp8",
            hybrid=True,
        ),
        ModelProfile(
            name="qwen3-coder-next-fp8",
            architecture="Qwen3NextForCausalLM",
            description="Qwen3-Coder-Next 80B-A3B, FP8 weights (hybrid MoE, no thinking)",
            hf_id="Qwen/Qwen3-Coder-Next-FP8",
            served_name="qwen3-coder-next",
            quantization="fp8",
            weights_gb=82.0,
            max_model_len=65536,
            # Hybrid: 82 GB of weights leave room for 5 full-length state slots on a DGX Spark.
            max_num_seqs=4,
            tool_call_parser="qwen3_coder",
            reasoning_parser=None,
            kv_cache_dtype="fp8",
            hybrid=True,
        ),
        ModelProfile(
            name="qwen3-32b",
            architecture="Qwen3ForCausalLM",
            description="Qwen3-32B, BF16 weights (dense)",
            hf_id="Qwen/Qwen3-32B",
            served_name="qwen3-32b",
            quantization="bf16",
            weights_gb=65.5,
            max_model_len=32768,
            max_num_seqs=16,
            # Qwen3 (non-coder) emits JSON inside <tool_call> tags: the hermes format.
            tool_call_parser="hermes",
            reasoning_parser="qwen3",
        ),
        ModelProfile(
            name="qwen3-32b-awq",
            architecture="Qwen3ForCausalLM",
            description="Qwen3-32B, AWQ 4-bit weights (dense)",
            hf_id="Qwen/Qwen3-32B-AWQ",
            served_name="qwen3-32b",
            quantization="awq",
            weights_gb=19.3,
            max_model_len=32768,
            max_num_seqs=32,
            tool_call_parser="hermes",
            reasoning_parser="qwen3",
        ),
        ModelProfile(
            name="gpt-oss-120b",
            architecture="GptOssForCausalLM",
            description="gpt-oss-120b, MXFP4 MoE weights",
            hf_id="openai/gpt-oss-120b",
            served_name="gpt-oss-120b",
            quantization="mxfp4",
            weights_gb=65.3,
            max_model_len=131072,
            max_num_seqs=32,
            tool_call_parser="openai",
            reasoning_parser="openai_gptoss",
        ),
        ModelProfile(
            name="tiny",
            architecture="Qwen2ForCausalLM",
            description="random-weight Qwen2-style demo model generated locally (gibberish text)",
            hf_id=None,
            served_name="tiny",
            quantization="bf16",
            weights_gb=0.01,
            # Claude Code's first prompt is ~35k tokens of the demo tokenizer: the whole
            # window the demo model has (its max_position_embeddings).
            max_model_len=131072,
            max_num_seqs=4,
            tool_call_parser="hermes",
            reasoning_parser=None,
            gpu_only=False,
        ),
    )
}
