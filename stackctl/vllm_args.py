"""The vLLM command line for a stack: profile defaults, user overrides, never a secret."""

from __future__ import annotations

from stackctl.config import StackConfig

# The model path inside the vLLM container (Compose) is the HF id; natively it may be a local dir.


def vllm_args(config: StackConfig, *, model_ref: str | None = None) -> list[str]:
    """Arguments after `vllm serve` / `python -m vllm.entrypoints.openai.api_server`.

    The API key is deliberately absent: vLLM reads VLLM_API_KEY from its environment, and a
    `--api-key` flag would show the secret to anyone running `ps`.
    """
    model = config.model_profile
    hardware = config.hardware_profile
    options = config.vllm
    ref = model_ref or options.model_path or model.hf_id
    if ref is None:
        raise ValueError(f"model '{model.name}' has no Hugging Face id; set vllm.model_path")
    args = [
        "--model", ref,
        "--served-model-name", config.served_name,
        "--host", "127.0.0.1",
        "--port", str(config.ports.vllm),
        # `auto` on GPUs takes the checkpoint's dtype (FP8 checkpoints carry their own
        # quantization config); `--dtype fp8` is not a valid choice and vLLM refuses it.
        "--dtype", hardware.dtype,
        "--max-model-len", str(options.max_model_len or model.max_model_len),
        "--max-num-seqs", str(options.max_num_seqs or model.max_num_seqs),
        "--enable-prefix-caching",
    ]
    if model.tool_call_parser:
        args += ["--enable-auto-tool-choice", "--tool-call-parser", model.tool_call_parser]
    if model.reasoning_parser:
        args += ["--reasoning-parser", model.reasoning_parser]
    if model.kv_cache_dtype:
        args += ["--kv-cache-dtype", model.kv_cache_dtype]
    utilization = options.gpu_memory_utilization or hardware.gpu_memory_utilization
    if utilization is not None and hardware.has_gpu:
        args += ["--gpu-memory-utilization", f"{utilization:.2f}"]
    args += list(hardware.vllm_flags)
    args += list(model.extra_args)
    args += options.extra_args
    return args
