"""The vLLM command line for a stack (from its VllmSettings), never with a secret."""

from __future__ import annotations

from stackctl.config import StackConfig
from stackctl.vllm_settings import vllm_settings


def vllm_args(config: StackConfig, *, model_ref: str | None = None, model_positional: bool = False) -> list[str]:
    """Arguments after `vllm serve` / `python -m vllm.entrypoints.openai.api_server`.

    `model_ref`: where the runtime's vLLM finds a local model (None: the local directory itself,
    else the Hugging Face id). `model_positional`: the model comes first, as `vllm serve MODEL`
    wants it (vLLM 0.32 deprecates `--model` there); else `--model MODEL`. The API key is deliberately absent: vLLM reads VLLM_API_KEY from
    its environment, and a `--api-key` flag would show the secret to anyone running `ps`.
    """
    settings = vllm_settings(config)
    ref = model_ref or (str(settings.local_model) if settings.local_model else settings.hf_id)
    if ref is None:
        raise ValueError(f"model '{config.model}' has no Hugging Face id; set vllm.model_path")
    args = [
        *([ref] if model_positional else ["--model", ref]),
        "--served-model-name", settings.served_name,
        "--host", "127.0.0.1",
        "--port", str(config.ports.vllm),
        # `auto` on GPUs takes the checkpoint's dtype (FP8 checkpoints carry their own
        # quantization config); `--dtype fp8` is not a valid choice and vLLM refuses it.
        "--dtype", settings.dtype,
        "--max-model-len", str(settings.max_model_len),
        "--max-num-seqs", str(settings.max_num_seqs),
        "--enable-prefix-caching",
        # Each reply's usage says how many prompt tokens came from the prefix cache
        # (`prompt_tokens_details.cached_tokens`); the filter-proxy hands them to clients
        # (Anthropic's `cache_read_input_tokens`) and counts them per key. Every vLLM since 0.6
        # accepts the flag, the V1 engine reports with it since 0.9.1 (vllm-project/vllm#18149):
        # all the releases in profiles/compat.yaml (0.10.2 on) and the CPU build.
        "--enable-prompt-tokens-details",
    ]
    if settings.tool_call_parser:  # None: a derived model of an unknown family (no tool calls)
        args += ["--enable-auto-tool-choice", "--tool-call-parser", settings.tool_call_parser]
    if settings.reasoning_parser:
        args += ["--reasoning-parser", settings.reasoning_parser]
    if settings.kv_cache_dtype:
        args += ["--kv-cache-dtype", settings.kv_cache_dtype]
    if settings.gpu_memory_utilization is not None:
        args += ["--gpu-memory-utilization", f"{settings.gpu_memory_utilization:.2f}"]
    return args + list(settings.extra_args)


def stackctl_flags(config: StackConfig) -> tuple[str, ...] | None:
    """The flags stackctl's own command line adds (the model, hardware and cluster profiles' and its
    defaults), not those of `vllm.extra_args`; None where the command cannot be rendered."""
    try:
        args = vllm_args(config)
    except ValueError:
        return None
    own = args[: len(args) - len(config.vllm.extra_args)]
    return tuple(dict.fromkeys(arg.split("=", 1)[0] for arg in own if arg.startswith("--")))
