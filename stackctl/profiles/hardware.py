"""Hardware profiles: how much memory vLLM may take, and what the GPU can run."""

from __future__ import annotations

from dataclasses import dataclass


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
    # Weight formats whose kernels do not run on this GPU, with the reason shown to the user.
    unsupported_quantizations: tuple[tuple[str, str], ...] = ()

    def unsupported_reason(self, quantization: str) -> str | None:
        return dict(self.unsupported_quantizations).get(quantization)


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
            name="dgx-spark",
            description="DGX Spark GB10, 128 GB unified LPDDR5X, sm_121",
            memory_gb=128,
            unified_memory=True,
            sm="sm_121",
            # Unified memory: the OS, page cache, CUDA graphs and torch.compile all live in the
            # same pool. 0.70 leaves ~38 GB to them; 0.9 (vLLM's default) ends in OOM kills.
            gpu_memory_utilization=0.70,
            unsupported_quantizations=(
                (
                    "mxfp4",
                    "MXFP4 MoE kernels are not built for sm_121 in the NGC vLLM images "
                    "(the engine fails at the first forward pass); pick a BF16/FP8 model "
                    "on dgx-spark",
                ),
            ),
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
        ),
    )
}
