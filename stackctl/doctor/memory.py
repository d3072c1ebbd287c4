"""Unified memory (GB10): vLLM's pool is the OS's memory too; leave the OS enough of it."""

from __future__ import annotations

from stackctl.config import UNIFIED_MEMORY_MAX_UTILIZATION
from stackctl.doctor.context import DoctorContext
from stackctl.doctor.result import CheckResult, fail, ok, warn

GB = 10**9
OS_RESERVE_BYTES = 20 * GB
_OUTSIDE_BUDGET = (
    "CUDA-graph capture and torch.compile allocate outside --gpu-memory-utilization; "
    "if the start dies with an OOM kill, lower it or add --enforce-eager to vllm.extra_args"
)


def check_unified_memory(ctx: DoctorContext) -> CheckResult:
    name = "memory"
    hardware = ctx.config.hardware_profile
    utilization = ctx.stack.vllm.gpu_memory_utilization
    total = ctx.facts.memory_total_bytes()
    if not hardware.unified_memory:
        return ok(name, f"{total / 1024**3:.0f} GiB RAM; GPU memory is separate" if total else "GPU memory is separate")
    if not total or not utilization:
        return warn(name, "could not read MemTotal from /proc/meminfo", "check /proc/meminfo is readable")
    left = total * (1 - utilization)
    found = f"unified memory {total / GB:.0f} GB, --gpu-memory-utilization {utilization:.2f} leaves {left / GB:.0f} GB to the OS"
    if utilization > UNIFIED_MEMORY_MAX_UTILIZATION or left < OS_RESERVE_BYTES:
        safe = min(UNIFIED_MEMORY_MAX_UTILIZATION, 1 - OS_RESERVE_BYTES / total)
        return fail(name, found, f"set vllm.gpu_memory_utilization: {int(safe * 100) / 100:.2f} in stack.yaml "
                    f"(at most {UNIFIED_MEMORY_MAX_UTILIZATION} and >= {OS_RESERVE_BYTES // GB} GB left to the OS)")
    if "--enforce-eager" in ctx.config.vllm.extra_args:
        return ok(name, found + "; --enforce-eager: no CUDA graphs outside the budget")
    return warn(name, found, _OUTSIDE_BUDGET)
