"""GPU memory: out of memory by phase, no room for the KV cache, a Mamba pool smaller than max_num_seqs."""

from __future__ import annotations

import math
import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import OUT_OF_MEMORY, Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix

_UTILIZATION = "vllm.gpu_memory_utilization"
_UTILIZATION_FLAG = "--gpu-memory-utilization"

# Where in the start an out-of-memory error happened, read from the closest marker above it.
_OOM_PHASES = {
    "graph capture": re.compile(
        r"capture_model|Capturing (?:the model for )?CUDA ?graphs|Capturing cudagraphs|torch\.cuda\.graph"
        r"|capture_end|cuda_graph\.py|Graph capturing", re.IGNORECASE,
    ),
    "profiling": re.compile(r"profile_run|_dummy_sampler_run|_dummy_run|determine_available_memory"),
    "loading the weights": re.compile(
        r"model_executor/models/|load_model|load_weights|model_loader|_initialize_model|Starting to load model"
        r"|ParallelLinear\(|VocabParallelEmbedding\(|ParallelLMHead\("
    ),
}
_TRIED = re.compile(r"Tried to allocate (?P<tried>[\d.]+ [GMK]iB)")


def _cuda_oom(evidence: Evidence) -> Diagnosis:
    phase = evidence.nearest_before(_OOM_PHASES)
    tried = evidence.read(_TRIED).get("tried")
    values = {"tried": tried} if tried else {}
    utilization = evidence.settings.gpu_memory_utilization
    if phase == "graph capture":
        lower = f" below {utilization:.2f}" if utilization else ""
        return found(evidence, Cause.cuda_graph_oom,
                     "the GPU ran out of memory while capturing CUDA graphs (after the KV cache was sized)",
                     Fix(f"lower {_UTILIZATION}{lower} ({_UTILIZATION_FLAG}) to leave room for the graphs, "
                         "lower vllm.max_num_seqs (--max-num-seqs: fewer batch sizes to capture), or add --enforce-eager "
                         "to vllm.extra_args to run in eager mode, without CUDA graphs",
                         key=_UTILIZATION, flag=_UTILIZATION_FLAG), **values)
    if phase == "loading the weights":
        return found(evidence, Cause.weights_do_not_fit,
                     "the GPU ran out of memory while loading the weights: the model does not fit on one GPU",
                     Fix("pick a smaller or quantized model (`model:` in stack.yaml; `stackctl profiles`), or "
                         "split it over GPUs with --tensor-parallel-size N in vllm.extra_args",
                         key="model", flag="--tensor-parallel-size"), **values)
    if phase is None and _weights_exceed_gpu(evidence):
        return found(evidence, Cause.weights_do_not_fit,
                     "the GPU ran out of memory and the model's weights alone are larger than the GPU (its parameter "
                     "count from the model name, at the dtype it runs in, against the capacity the error states)",
                     Fix("the model does not fit on this GPU at this precision: pick a smaller or quantized model "
                         "(AWQ, GPTQ or FP8 weights; `model:` in stack.yaml; `stackctl profiles`), or split it over "
                         "GPUs with --tensor-parallel-size N in vllm.extra_args", key="model",
                         flag="--tensor-parallel-size"), **values)
    where = " while profiling memory (a dummy forward pass)" if phase == "profiling" else ""
    return found(evidence, Cause.cuda_oom, f"the GPU ran out of memory{where}",
                 Fix(f"lower {_UTILIZATION} ({_UTILIZATION_FLAG}), vllm.max_num_seqs or vllm.max_model_len; check "
                     "that no other process holds GPU memory (`nvidia-smi`); `stackctl doctor` checks the fit",
                     key=_UTILIZATION, flag=_UTILIZATION_FLAG), **values)


_CAPACITY = re.compile(r"(?P<total>[\d.]+) GiB total capacity")
_MODEL_ARG = re.compile(r"--model[= ](?P<model>\S+)")
_PARAMETERS = re.compile(r"(?<![\d.])(?P<billions>\d+(?:\.\d+)?)[Bb](?![a-zA-Z])")
# Bytes per parameter by the weight format a model name states (16-bit unless it says otherwise).
_BYTES_BY_FORMAT = (("awq", 0.5), ("gptq", 0.5), ("int4", 0.5), ("4bit", 0.5), ("fp8", 1.0), ("int8", 1.0))


def _weights_exceed_gpu(evidence: Evidence) -> bool:
    """The weights alone (parameters named in --model, at the bytes their format takes) exceed the
    GPU capacity the OOM message states: no memory setting can make them fit."""
    capacity = evidence.read(_CAPACITY).get("total")
    model = next(iter(evidence.all_found(_MODEL_ARG, "model")), None)
    size = _PARAMETERS.search(model.rsplit("/", 1)[-1]) if model else None
    if capacity is None or model is None or size is None:
        return False
    per_parameter = next((bytes_ for marker, bytes_ in _BYTES_BY_FORMAT if marker in model.lower()), 2.0)
    weights_gib = float(size["billions"]) * 1e9 * per_parameter / 2**30
    return weights_gib > float(capacity)


def _sampler_warmup_oom(evidence: Evidence) -> Diagnosis:
    requests = int(evidence.read(re.compile(r"with (?P<n>\d+) dummy requests"))["n"])
    target = max(1, requests // 2)
    # The flag's own words too (a plain `vllm serve` user sets it there), and below 1: at 1 (or near it) the KV
    # cache takes what the sampler's warm-up needs.
    utilization = evidence.settings.gpu_memory_utilization
    stated = f" (the log says {utilization:g})" if utilization else ""
    return found(evidence, Cause.sampler_warmup_oom,
                 f"the GPU ran out of memory warming up the sampler for {requests} sequences (max_num_seqs)",
                 Fix(f"set vllm.max_num_seqs to {target} or less (--max-num-seqs), or lower {_UTILIZATION}: "
                     f"{_UTILIZATION_FLAG} below 1{stated}, e.g. 0.9, vLLM's default (at 1, or close to it, the KV "
                     "cache is sized into the memory the sampler's warm-up needs)",
                     key="vllm.max_num_seqs", flag="--max-num-seqs", value=str(target)),
                 max_num_seqs=requests)


def _no_cache_memory(evidence: Evidence) -> Diagnosis:
    utilization = evidence.settings.gpu_memory_utilization
    above = f" above {utilization:.2f}" if utilization else ""
    return found(evidence, Cause.no_cache_memory,
                 "nothing was left for the KV cache after the weights and activations",
                 Fix(f"raise {_UTILIZATION}{above} ({_UTILIZATION_FLAG}) if the GPU has room, or pick a smaller or "
                     "quantized model (`model:`); check that no other process holds GPU memory (`nvidia-smi`)",
                     key=_UTILIZATION, flag=_UTILIZATION_FLAG))


_FREE_MEMORY = re.compile(
    r"Free memory on device(?: \S+)? \((?P<free>[\d.]+)/(?P<total>[\d.]+) GiB\) on startup is less than"
    r"[^(]*\((?P<utilization>[\d.]+), (?P<wanted>[\d.]+) GiB\)"
)


def _free_memory_below_target(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_FREE_MEMORY)
    if not values:
        return found(evidence, Cause.free_memory_below_target,
                     "less GPU memory is free than the utilization target asks for",
                     Fix(f"lower {_UTILIZATION} ({_UTILIZATION_FLAG}) or stop what else holds GPU memory (`nvidia-smi`)",
                         key=_UTILIZATION, flag=_UTILIZATION_FLAG))
    free, total = float(values["free"]), float(values["total"])
    fits = f"{math.floor(free / total * 100) / 100:.2f}"
    summary = (f"only {free:g} of {total:g} GiB is free at start, less than gpu_memory_utilization "
               f"{values['utilization']} asks for ({values['wanted']} GiB)")
    readings = {"free_gib": free, "total_gib": total, "gpu_memory_utilization": float(values["utilization"])}
    lower = f"set {_UTILIZATION} to {fits} or less ({_UTILIZATION_FLAG})"
    if free < total / 2:
        # Most of the GPU is taken before this vLLM allocates anything: another process holds it (a
        # second vLLM takes its own utilization share of the whole GPU), and lowering this one's share
        # to what is left rarely leaves room for the model.
        held = f"{total - free:.1f}"
        return found(evidence, Cause.free_memory_below_target, f"{summary}: another process holds {held} GiB",
                     Fix(f"another process holds {held} of {total:g} GiB of GPU memory (`nvidia-smi` lists it; a second "
                         "vLLM on this GPU takes its own --gpu-memory-utilization share of the whole GPU, and on unified "
                         "memory such as DGX Spark's GB10 the system's own use counts too): stop it, or lower the other "
                         "vLLM's --gpu-memory-utilization so that the shares of both add up to less than the GPU; "
                         f"else {lower}", key=_UTILIZATION, flag=_UTILIZATION_FLAG, value=fits), **readings)
    return found(evidence, Cause.free_memory_below_target, summary,
                 Fix(f"{lower}, or stop what else holds GPU memory (`nvidia-smi`)", key=_UTILIZATION,
                     flag=_UTILIZATION_FLAG, value=fits), **readings)


_KV_TOKENS = re.compile(
    r"max seq len \((?P<length>\d+)\) is larger than the maximum number of tokens that can be stored in KV cache "
    r"\((?P<capacity>\d+)\)"
)
_KV_MEMORY = re.compile(
    r"max seq len \((?P<length>\d+)\), \((?P<needed>[\d.]+) GiB KV cache is needed, which is larger than the "
    r"available KV cache memory \((?P<available>[\d.]+) GiB\)(?:\. Based on the available memory, the estimated "
    r"maximum model length is (?P<estimate>\d+))?"
)


def _kv_cache_too_small(evidence: Evidence) -> Diagnosis:
    by_tokens, by_memory = evidence.read(_KV_TOKENS), evidence.read(_KV_MEMORY)
    key, flag = "vllm.max_model_len", "--max-model-len"
    if by_tokens:
        length, limit = int(by_tokens["length"]), int(by_tokens["capacity"])
        summary = f"max_model_len {length} does not fit the KV cache, which holds {limit} tokens"
        values: dict[str, str | int | float] = {"max_model_len": length, "kv_cache_tokens": limit}
    elif by_memory:
        length, needed, available = int(by_memory["length"]), float(by_memory["needed"]), float(by_memory["available"])
        # vLLM's own estimate when it gives one; otherwise the share of the window that fits
        # (KV memory grows linearly with the length for full attention).
        estimated = "estimate" not in by_memory
        limit = int(length * available / needed) if estimated else int(by_memory["estimate"])
        summary = (f"one sequence of max_model_len {length} needs {needed:g} GiB of KV cache; "
                   f"{available:g} GiB is available")
        values = {"max_model_len": length, "needed_gib": needed, "available_gib": available, "fits": limit}
        if estimated:
            return found(evidence, Cause.kv_cache_too_small, summary,
                         Fix(f"lower {key} to about {limit} ({flag}), or raise {_UTILIZATION} if the GPU has room",
                             key=key, flag=flag, value=str(limit)), **values)
    else:
        return found(evidence, Cause.kv_cache_too_small, "the KV cache cannot hold one sequence of max_model_len",
                     Fix(f"lower {key} ({flag}) or raise {_UTILIZATION}", key=key, flag=flag))
    return found(evidence, Cause.kv_cache_too_small, summary,
                 Fix(f"set {key} to {limit} or less ({flag}), or raise {_UTILIZATION} if the GPU has room",
                     key=key, flag=flag, value=str(limit)), **values)


def _mamba_cache_overflow(evidence: Evidence) -> Diagnosis:
    values = evidence.read(re.compile(
        r"max_num_seqs \((?P<seqs>\d+)\) exceeds available Mamba cache blocks \((?P<blocks>\d+)\)"))
    seqs, blocks = int(values["seqs"]), int(values["blocks"])
    return found(evidence, Cause.mamba_cache_overflow,
                 f"max_num_seqs ({seqs}) exceeds the Mamba cache blocks available ({blocks}): a hybrid model "
                 "keeps one recurrent-state block per sequence",
                 Fix(f"set vllm.max_num_seqs to {blocks} or less (--max-num-seqs)",
                     key="vllm.max_num_seqs", flag="--max-num-seqs", value=str(blocks)),
                 max_num_seqs=seqs, mamba_blocks=blocks)

_PROFILED = re.compile(r"Initial free memory (?P<initial>[\d.]+) GiB, current free\s+memory (?P<current>[\d.]+) GiB")


def _memory_profiling_free_memory_grew(evidence: Evidence) -> Diagnosis:
    """vLLM sizes the KV cache from the free memory it measures before and after a profiling run and
    refuses to start when more is free after it: another process released GPU memory meanwhile, or, on
    unified memory (DGX Spark's GB10), the operating system freed page cache. A KV cache size given in
    bytes skips that sizing."""
    values = evidence.read(_PROFILED)
    initial, current = values.get("initial", ""), values.get("current", "")
    grew = f" ({initial} GiB free before profiling, {current} GiB after)" if initial and current else ""
    return found(evidence, Cause.memory_profiling_free_memory_grew,
                 f"vLLM's memory profiling found more free GPU memory after its profiling run than before{grew}: "
                 "another process released memory meanwhile, or on unified memory (DGX Spark GB10) the system freed "
                 "page cache, so vLLM cannot size the KV cache from it",
                 Fix("give the KV cache budget explicitly, which skips memory profiling: add --kv-cache-memory-bytes "
                     "with a byte count to vllm.extra_args in stack.yaml (e.g. --kv-cache-memory-bytes 21474836480 for "
                     "20 GiB; stackctl has no key of its own for it); and start vLLM with no other GPU process "
                     "starting or stopping beside it (`nvidia-smi` lists them). On unified memory, dropping the page "
                     "cache first (`sync; echo 3 | sudo tee /proc/sys/vm/drop_caches`) keeps free memory from "
                     "moving during profiling; then `stackctl up`", key="vllm.extra_args",
                     flag="--kv-cache-memory-bytes"),
                 **({"initial_free_gib": float(initial), "current_free_gib": float(current)} if grew else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.cuda_oom, r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory", _cuda_oom,
              OUT_OF_MEMORY),
    signature(Cause.sampler_warmup_oom, r"out of memory occurred when warming up sampler with \d+", _sampler_warmup_oom),
    signature(Cause.no_cache_memory, r"No available memory for the cache blocks", _no_cache_memory),
    # Read whole where the message wraps after "on startup" (a terminal, a pasted log).
    signature(Cause.free_memory_below_target, r"Free memory on device.{0,40} on startup(?: is less than|\s*$)",
              _free_memory_below_target),
    signature(Cause.kv_cache_too_small,
              r"is larger than the maximum number of tokens that can be stored in KV cache"
              r"|KV cache is needed, which is larger than the available KV cache memory"
              r"|To serve at least one request with the models?'s+ max seq len", _kv_cache_too_small),
    signature(Cause.memory_profiling_free_memory_grew, r"Error in memory profiling\. Initial free memory",
              _memory_profiling_free_memory_grew),
    signature(Cause.mamba_cache_overflow, r"exceeds available Mamba cache blocks", _mamba_cache_overflow),
)
