"""vLLM that found no platform because it could not use NVML through its Python module, told apart from a container
without the GPU; read by its signature and by the fallback alike.

vLLM picks its platform before anything touches CUDA: for NVIDIA it loads NVML through the `pynvml` module (the
nvidia-ml-py package) and counts the GPUs. When that fails it runs on UnspecifiedPlatform ("No platform detected,
vLLM is running on UnspecifiedPlatform") and stops at "RuntimeError: Failed to infer device type". A container
given no GPU does that too (NVML's library is not even there: vllm-project/vllm#13946, `nvidia-ctk`); what tells
the module apart is the environment vLLM runs in. The old `pynvml` package (before 12.0) ships a module of the same
name that shadows nvidia-ml-py's, and vLLM 0.7.1 and 0.7.2 failed on it (vllm-project/vllm#12947: "Upgrading pynvml to
12+ will fix for now", fixed in 0.7.3); launchers that install vLLM into an environment of their own with other
packages meet it most: ai-dynamo/dynamo#391 (`pip install pynvml==12.0.0`, `pip uninstall flash_attn`, vLLM's records
inside dynamo's own log), xorbitsai/inference#2825 (Xinference's image: `pip install 'pynvml>=12.0.0'`). So the
module is read where the log shows one of those: pynvml named, vLLM 0.7.1 or 0.7.2, or vLLM's failure carried in
another program's log records; never where it shows NVML's library or the driver missing, or no CUDA GPU at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

PLATFORM_UNDETECTED = re.compile(r"Failed to infer device type|No platform detected, vLLM is running on "
                                 r"UnspecifiedPlatform")
# The Python module named in the log (a missing module, the deprecation warning of pynvml's newer releases).
_PYNVML = re.compile(r"\bpynvml\b")
_VLLM_072 = re.compile(r"vLLM API server version 0\.7\.[12]\b|\bvllm[ =]=?=?0\.7\.[12]\b|\bvllm ?07[12]\b",
                       re.IGNORECASE)
# vLLM's failure inside another program's record: a Rust module path (dynamo_llm::engines::vllm::worker) or a dotted
# Python logger (xinference.api.restful_api) before the message. vLLM's own records name a file (engine.py:518]).
_LAUNCHER = re.compile(r"\b(?!vllm\b)(?P<launcher>[a-z_][a-z0-9_]*)(?:(?:::[a-z0-9_]+)+|(?:\.[a-z_][a-z0-9_]*){2,})"
                       r"(?!\.py)\b.*?Failed to infer device type")
# What says the GPU or its driver is not there: the no-GPU reading's.
_NO_GPU = re.compile(r"NVML Shared Library Not Found|NVMLError_LibraryNotFound|No CUDA GPUs are available"
                     r"|Found no NVIDIA driver|libcuda\.so\.1: cannot open|Driver Not Loaded|NVMLError_DriverNotLoaded",
                     re.IGNORECASE)


def module_evidence(lines: Iterable[str]) -> str | None:
    """What in these lines says vLLM's NVML module, not the GPU, is what failed; None where nothing does, or where a
    line says the GPU or its driver is missing."""
    text = "\n".join(lines)
    if _NO_GPU.search(text):
        return None
    launcher = _LAUNCHER.search(text)
    if launcher:
        return f"vLLM runs inside {launcher['launcher']}'s environment"
    if _PYNVML.search(text):
        return "the log names pynvml"
    version = _VLLM_072.search(text)
    return f"vLLM 0.7.1 or 0.7.2 ({version.group(0)})" if version else None


def module_fix(evidence: str) -> str:
    return ("vLLM found no platform: it detects an NVIDIA GPU by loading NVML through the `pynvml` module (the "
            f"nvidia-ml-py package) before CUDA, and that failed in this environment ({evidence}), where the GPU itself may "
            "well be there. "
            "The usual cause is the old `pynvml` package (before 12.0), whose module of the same name shadows "
            "nvidia-ml-py's, pulled in by another package (flash_attn in one launcher's image): in the engine's own "
            "environment (the launcher's image or virtualenv) upgrade it, `pip install -U 'pynvml>=12'` (12 and later "
            "only wrap nvidia-ml-py), or remove it and reinstall the official binding, `pip uninstall -y pynvml && pip "
            "install --force-reinstall nvidia-ml-py`, and `pip uninstall flash_attn` where nothing needs the package "
            "that brought it; `pip show pynvml nvidia-ml-py` shows what is installed, and vLLM 0.7.3 or later copes "
            "with the old one. `VLLM_LOGGING_LEVEL=DEBUG` makes vLLM print why (\"Exception happens when checking CUDA "
            "platform: ...\"). Where `nvidia-smi` fails in that same container instead, it has no GPU: give it one "
            "(`gpus: all` and the NVIDIA Container Toolkit)")
