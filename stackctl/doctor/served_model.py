"""Model fit and disk space, from the model's config.json and weight files in the local HF cache."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stackctl.doctor.context import DoctorContext
from stackctl.doctor.result import CheckResult, fail, ok, warn
from stackctl.models.fit import FitReport, fit_model, round_down_len
from stackctl.models.shape import (
    GIB,
    ModelShape,
    downloaded_bytes,
    find_config,
    load_config,
    model_shape,
    weight_bytes_in_snapshot,
)

GB = 10**9
VLLM_DEFAULT_GPU_MEMORY_UTILIZATION = 0.9
# Room for the tokenizer, config and the partial file being written, beyond the weights.
DISK_MARGIN = 1.05
_LVM_HINT = (
    "; Ubuntu's installer gives the root LV only 100 GB of an LVM disk: `sudo vgs` shows the free "
    "space, `sudo lvextend -r -l +100%FREE {device}` grows it"
)


@dataclass(frozen=True)
class ModelFacts:
    hf_id: str | None
    config_path: Path | None
    shape: ModelShape | None
    weight_bytes: int
    # Where weight_bytes came from: "checkpoint index" | "config estimate" | "profile".
    weight_source: str


def model_facts(ctx: DoctorContext) -> ModelFacts:
    profile = ctx.config.model_profile
    profile_bytes = int(profile.weights_gb * GB)
    if ctx.config.vllm.model_path:
        directory = Path(ctx.config.vllm.model_path).expanduser()
        config_path: Path | None = directory / "config.json" if (directory / "config.json").is_file() else None
        snapshot: Path | None = directory
    elif profile.hf_id:
        config_path = find_config(ctx.hf_cache, profile.hf_id)
        snapshot = config_path.parent if config_path else None
    else:
        return ModelFacts(None, None, None, profile_bytes, "profile")
    shape = model_shape(load_config(config_path)) if config_path else None
    on_disk = weight_bytes_in_snapshot(snapshot) if snapshot else None
    if on_disk:
        return ModelFacts(profile.hf_id, config_path, shape, on_disk, "checkpoint index")
    return ModelFacts(profile.hf_id, config_path, shape, profile_bytes, "profile")


def memory_bytes(ctx: DoctorContext) -> tuple[int, str] | None:
    """What vLLM's --gpu-memory-utilization is a fraction of, and where that number came from."""
    hardware = ctx.config.hardware_profile
    if hardware.unified_memory:
        total = ctx.facts.memory_total_bytes()
        if total:
            return total, "MemTotal (unified memory)"
    sizes = [(gpu.memory_mib, gpu.name) for gpu in ctx.gpu_query.gpus if gpu.memory_mib]
    if sizes:
        return sizes[0][0] * 1024 * 1024, sizes[0][1]
    if hardware.memory_gb:
        return int(hardware.memory_gb * GIB), f"profile {hardware.name}"
    return None


def check_model_fit(ctx: DoctorContext) -> CheckResult:
    name = "model-fit"
    config = ctx.config
    if not config.hardware_profile.has_gpu:
        return ok(name, f"not checked on hardware '{config.hardware}' (the CPU engine sizes its own KV cache)")
    facts = model_facts(ctx)
    if facts.shape is None:
        target = facts.hf_id or config.vllm.model_path
        return warn(name, f"no config.json for {target} in {ctx.hf_cache} yet: fit not computed",
                    f"fetch just the config (`hf download {target} config.json`, a few KB), then run `stackctl doctor` again")
    memory = memory_bytes(ctx)
    if memory is None:
        return warn(name, "GPU memory unknown (no nvidia-smi answer, profile 'generic')",
                    "fix the GPU check first, or pick the hardware profile of this GPU")
    settings = ctx.stack.vllm
    if settings.cluster is not None:
        # One model over a Ray cluster: every node's GPUs hold their share (same GPUs on each node).
        nodes, tensor, pipeline = settings.cluster
        memory = (memory[0] * tensor * pipeline, f"{memory[1]} x {tensor * pipeline} GPUs on {nodes} nodes")
    # GPU hardware always has a utilization (its profile's, or stack.yaml's); 0.9 is vLLM's own default.
    utilization = settings.gpu_memory_utilization or VLLM_DEFAULT_GPU_MEMORY_UTILIZATION
    report = fit_model(
        facts.shape,
        weight_bytes=facts.weight_bytes,
        memory_bytes=memory[0],
        gpu_memory_utilization=utilization,
        max_model_len=settings.max_model_len,
        max_num_seqs=settings.max_num_seqs,
        kv_cache_dtype=settings.kv_cache_dtype,
    )
    return judge_fit(name, report, facts, memory[1], utilization, settings.kv_cache_dtype)


def judge_fit(name: str, report: FitReport, facts: ModelFacts, memory_source: str, utilization: float,
              kv_dtype: str | None) -> CheckResult:
    found = describe_fit(report, facts, memory_source, utilization, kv_dtype)
    length, seqs = report.max_model_len, report.max_num_seqs
    if report.pool_bytes <= 0:
        return fail(name, found + "; the weights alone exceed the budget",
                    "pick a smaller or quantized model, or raise vllm.gpu_memory_utilization (not above 0.70 on unified memory)")
    if not report.one_sequence_fits:
        longest = round_down_len(report.max_len_at(1))
        return fail(name, found + f"; one {length}-token sequence does not fit (vLLM refuses to start)",
                    f"set vllm.max_model_len: {longest} (or less) in stack.yaml")
    if report.hybrid and seqs > report.seq_cap:
        return fail(name, found + f"; hybrid model: {seqs} sequences x {length} tokens do not fit, "
                    f"at most {report.seq_cap} recurrent-state slots at full length",
                    f"set vllm.max_num_seqs: {report.seq_cap} (or vllm.max_model_len: {round_down_len(report.max_len_at(seqs))})")
    if not report.requested_fits:
        return warn(name, found + f"; only {report.max_seqs_at(length)} of {seqs} sequences fit at full length "
                    "(vLLM preempts the rest)",
                    f"fine for mostly short requests; for guaranteed concurrency set vllm.max_num_seqs: "
                    f"{report.max_seqs_at(length)} or vllm.max_model_len: {round_down_len(report.max_len_at(seqs))}")
    return ok(name, found)


def describe_fit(report: FitReport, facts: ModelFacts, memory_source: str, utilization: float, kv_dtype: str | None) -> str:
    shape = facts.shape
    assert shape is not None
    layers = f"{shape.full_attention_layers}/{shape.layers} layers keep KV"
    if shape.hybrid:
        layers += f", {shape.recurrent_layers} recurrent ({report.fixed_bytes_per_sequence / 2**20:.0f} MiB state/seq)"
    if shape.sliding_layers:
        layers += f", {shape.sliding_layers} sliding-window ({shape.sliding_window} tokens)"
    return (
        f"budget {report.budget_bytes / GB:.1f} GB ({memory_source} x {utilization:.2f}) - weights "
        f"{report.weight_bytes / GB:.1f} GB ({facts.weight_source}) - reserve {report.reserve_bytes / GB:.1f} GB "
        f"= KV pool {report.pool_bytes / GB:.1f} GB; {report.kv_bytes_per_token // 1024} KiB/token "
        f"({kv_dtype or 'bf16'} KV; {layers}); fits {report.pool_tokens} tokens: "
        f"{report.max_seqs_at(report.max_model_len)} x {report.max_model_len} or "
        f"{report.max_num_seqs} x {report.max_len_at(report.max_num_seqs)}"
    )


def check_disk(ctx: DoctorContext) -> CheckResult:
    name = "disk"
    profile = ctx.config.model_profile
    if not profile.hf_id or ctx.config.vllm.model_path:
        return ok(name, "local model directory: nothing to download")
    facts = model_facts(ctx)
    have = downloaded_bytes(ctx.hf_cache, profile.hf_id)
    needed = max(0, int(facts.weight_bytes * DISK_MARGIN) - have)
    where, free = ctx.facts.disk_free_bytes(ctx.hf_cache)
    found = (f"{free / GB:.1f} GB free on {where}; {profile.hf_id} needs {facts.weight_bytes / GB:.1f} GB "
             f"({facts.weight_source}), {have / GB:.1f} GB already downloaded")
    if needed <= free:
        return ok(name, found)
    fix = (f"free {(needed - free) / GB:.0f} GB there, or point hf_cache in stack.yaml at a larger disk "
           "(the download otherwise dies part-way through the shards)")
    mount = ctx.facts.mount_source(where)
    if mount and mount[0].startswith("/dev/mapper/"):
        fix += _LVM_HINT.format(device=mount[0])
    return fail(name, found, fix)
