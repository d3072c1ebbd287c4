"""Hardware profiles: how much memory vLLM may take, and what the GPU can run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# What fragments can vary on (their `x-stackctl.variants`).
HardwareTrait = Literal["cpu", "unified-memory"]


@dataclass(frozen=True)
class HardwareProfile:
    name: str
    description: str
    # Memory the accelerator can give vLLM, in GB (None: unknown, e.g. `generic`).
    memory_gb: float | None
    # GB10 shares one LPDDR5X pool between CPU and GPU: vLLM's 0.9 default starves the OS.
    unified_memory: bool
    # CUDA compute capability as "sm_XYZ" (None for CPU).
    sm: str | None
    gpu_memory_utilization: float | None
    has_gpu: bool = True
    # vLLM's --dtype: `auto` takes the checkpoint's dtype (never `fp8`, which vLLM rejects).
    dtype: str = "auto"
    # Flags and environment the engine needs on this hardware (the CPU build has its own).
    vllm_flags: tuple[str, ...] = ()
    vllm_environment: tuple[tuple[str, str], ...] = ()
    # Weight formats whose kernels do not run on this GPU, with the reason shown to the user.
    unsupported_quantizations: tuple[tuple[str, str], ...] = ()
    # Machines serving one model together through Ray (hosts: one gpu host + ray-workers).
    nodes: int = 1

    @property
    def traits(self) -> frozenset[HardwareTrait]:
        traits: set[HardwareTrait] = set()
        if not self.has_gpu:
            traits.add("cpu")
        if self.unified_memory:
            traits.add("unified-memory")
        return frozenset(traits)

    def unsupported_reason(self, quantization: str) -> str | None:
        return dict(self.unsupported_quantizations).get(quantization)


_GB10_UNSUPPORTED = (
    (
        "mxfp4",
        (
            "MXFP4 MoE kernels are not built for sm_121 in the NGC vLLM images "
            "(the engine fails at the first forward pass); pick a BF16/FP8 model "
            "on dgx-spark"
        ),
    ),
)

HARDWARE_PROFILES: dict[str, HardwareProfile] = {
    profile.name: profile
    for profile in (
        HardwareProfile(
            name="rtx-pro-6000",
            description="RTX PRO 6000 Blackwell, 96 GB GDDR7, sm_120",
            memory_gb=96,
            unified_memory=False,
            sm="sm_120",
            gpu_memory_utilization=0.90,
        ),
        HardwareProfile(
            name="h100",
            description="NVIDIA H100 80 GB HBM3, sm_90 (measured by the GPU check, docs/gpu.md)",
            memory_gb=80,
            unified_memory=False,
            sm="sm_90",
            # Measured on an H100 80GB (driver 580, vLLM 0.24.0, CUDA graphs on, 2026-11-24): at 0.90
            # vLLM held 73.7 of 81.6 GB and 7.7 GB stayed free; its CUDA graphs (0.33 GiB for 4 layers,
            # ~1-2 GiB at a real model's depth) and the driver's share come out of that headroom.
            # 0.92 gives the KV pool 1.6 GB more and still leaves about 6 GB.
            gpu_memory_utilization=0.92,
            # The batch budget the activation reserve of doctor's fit (3 GiB) is measured at: vLLM's
            # non-KV share at 8192 tokens was 1.9 GiB (hidden 4096, a 151936-token vocabulary).
            vllm_flags=("--max-num-batched-tokens", "8192"),
        ),
        HardwareProfile(
            name="dgx-spark",
            description="DGX Spark GB10, 128 GB unified LPDDR5X, sm_121",
            memory_gb=128,
            unified_memory=True,
            sm="sm_121",
            # Unified memory: the OS, page cache, CUDA graphs and torch.compile all live in the
            # same pool. 0.70 leaves ~38 GB to them; 0.9 (vLLM's default) ends in OOM kills.
            gpu_memory_utilization=0.70,
            unsupported_quantizations=_GB10_UNSUPPORTED,
        ),
        HardwareProfile(
            name="dgx-spark-pair",
            description="two DGX Spark GB10 linked over ConnectX serving one model through Ray, 2 x 128 GB unified",
            memory_gb=128,  # per node; model fit counts both
            unified_memory=True,
            sm="sm_121",
            # 0.70 of each node's pool, as on one Spark: each OS shares its own pool with vLLM.
            gpu_memory_utilization=0.70,
            nodes=2,
            unsupported_quantizations=_GB10_UNSUPPORTED,
        ),
        HardwareProfile(
            name="generic",
            description="any CUDA GPU (memory read at run time)",
            memory_gb=None,
            unified_memory=False,
            sm=None,
            gpu_memory_utilization=0.90,
        ),
        HardwareProfile(
            name="cpu",
            description="no GPU: vLLM's CPU build serving the tiny demo model",
            memory_gb=None,
            unified_memory=False,
            sm=None,
            gpu_memory_utilization=None,
            has_gpu=False,
            # float32 runs fast on every x86 CPU; bfloat16 needs AVX512-BF16/AMX.
            dtype="float32",
            vllm_flags=(
                # torch.compile warm-up took ~35 s of the start on 2 cores; eager is plenty
                # for a tiny model.
                "--enforce-eager",
                # One worker inside the engine process: no extra process to import torch (~10 s).
                "--distributed-executor-backend",
                "uni",
            ),
            vllm_environment=(
                # The CPU backend reserves its KV cache from RAM up front (GiB).
                ("VLLM_CPU_KVCACHE_SPACE", "1"),
                ("VLLM_ENABLE_V1_MULTIPROCESSING", "0"),
                # vLLM's internal sockets on loopback, not the host's first interface.
                ("VLLM_HOST_IP", "127.0.0.1"),
                # A local model directory needs no hub; the machines we run on have none.
                ("HF_HUB_OFFLINE", "1"),
                ("TRANSFORMERS_OFFLINE", "1"),
                ("VLLM_NO_USAGE_STATS", "1"),
                ("DO_NOT_TRACK", "1"),
            ),
        ),
    )
}
