"""The vLLM engines stackctl renders: NVIDIA's NGC image for GPU hosts (the CPU stack builds
its own, images/vllm-cpu)."""

from __future__ import annotations

# What `images.vllm` defaults to on GPU hardware.
DEFAULT_VLLM_IMAGE = "nvcr.io/nvidia/vllm:25.11-py3"
