"""The vLLM engines stackctl renders: NVIDIA's NGC image for GPU hosts (the CPU stack builds
its own, images/vllm-cpu), chosen from the compatibility table (compat.yaml)."""

from __future__ import annotations

from stackctl.profiles.compat import best_image, newest_image
from stackctl.profiles.hardware import HardwareProfile
from stackctl.profiles.model_profiles import ModelProfile

# The newest NGC tag in the table (what fixes name when no model is in view).
DEFAULT_VLLM_IMAGE = newest_image().reference


def default_vllm_image(hardware: HardwareProfile, model: ModelProfile) -> str:
    """What `images.vllm` defaults to: the newest NGC tag in the table whose vLLM serves the
    model's architecture and whose CUDA has kernels for the profile's GPU."""
    chosen = best_image(model.architecture, hardware.sm)
    return chosen.reference if chosen else DEFAULT_VLLM_IMAGE
