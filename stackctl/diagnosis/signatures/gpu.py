"""The GPU, its driver and the kernels built for it: none visible, a driver older than the image,
no kernels for sm_120/sm_121, bfloat16 on a GPU older than Ampere, a weight format or attention
feature this GPU or build lacks."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import ADVISORY, CONSEQUENCE, Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity
from stackctl.profiles.engines import DEFAULT_VLLM_IMAGE

# NVIDIA's NGC image: built with kernels for Blackwell (sm_120 RTX PRO 6000, sm_121 GB10).
_NGC_IMAGE = DEFAULT_VLLM_IMAGE


# stackctl's own GPU exporter found no GPU and serves anyway (stackctl/commands/gpu_exporter.py):
# `gpu-exporter: no GPU (nvml_library_not_found: NVML Shared Library Not Found); serving http://...`.
_EXPORTER_WITHOUT_GPU = re.compile(r"gpu-exporter: no GPU \((?P<reason>\w+): (?P<detail>.*)\); serving ")


def _no_gpu(evidence: Evidence) -> Diagnosis:
    exporter = evidence.read(_EXPORTER_WITHOUT_GPU)
    if exporter:
        # Not a failure: the exporter serves stackctl_gpu_present 0 with the reason (a host without a GPU,
        # such as a CPU-only demo stack, logs this when healthy).
        return found(evidence, Cause.no_gpu,
                     f"stackctl's GPU exporter found no GPU to measure ({exporter['reason']}: {exporter['detail']}) "
                     "and serves stackctl_gpu_present 0; a warning: it keeps running",
                     Fix("nothing to do on a host without an NVIDIA GPU; on a GPU box, `nvidia-smi` must list the GPU "
                         "where the exporter runs (the driver loaded and its libnvidia-ml.so.1 on the library path; "
                         "under Compose the gpu-exporter service needs `gpus: all`, which stackctl renders unless it "
                         "found the host without a GPU, and Docker the NVIDIA Container Toolkit); "
                         "then `stackctl up`"),
                     severity=Severity.advisory, reason=exporter["reason"])
    return found(evidence, Cause.no_gpu, "vLLM sees no NVIDIA GPU (no CUDA device, or no NVML/driver library)",
                 Fix("give vLLM the GPU: under Compose the vllm service needs `gpus: all` (stackctl's fragment has it) "
                     "and Docker needs the NVIDIA Container Toolkit (`sudo nvidia-ctk runtime configure "
                     "--runtime=docker`, then restart Docker); natively, `nvidia-smi` must list the GPU. "
                     "`stackctl doctor` checks that nvidia-smi lists the GPU and, under Compose, that Docker lists the nvidia "
                     "runtime or a CDI spec"))


_DRIVER_CUDA = re.compile(r"too old \(found version (?P<version>\d+)\)")


def _driver_too_old(evidence: Evidence) -> Diagnosis:
    version = evidence.read(_DRIVER_CUDA).get("version")
    if "forward compatibility" in evidence.text:
        return found(evidence, Cause.driver_too_old,
                     "the image's CUDA is newer than the host driver and its forward-compatibility libraries do not "
                     "run on this GPU (Error 804)",
                     Fix("upgrade the host NVIDIA driver to one that supports the image's CUDA version, or use a "
                         "images.vllm built for the CUDA the driver supports (`nvidia-smi` shows it)", key="images.vllm"))
    supports = f"CUDA {int(version) // 1000}.{int(version) % 1000 // 10}" if version else "an older CUDA"
    return found(evidence, Cause.driver_too_old,
                 f"the NVIDIA driver is too old for this build: it supports {supports}",
                 Fix(f"upgrade the NVIDIA driver (it supports {supports}), or use a images.vllm / engine built for "
                     f"{supports}; on a data-center GPU (not GeForce, nor most workstation GPUs, which refuse it with "
                     "Error 804) NVIDIA's CUDA forward-compatibility package (cuda-compat-X-Y for the build's CUDA, "
                     "its libraries first on LD_LIBRARY_PATH) lets a newer CUDA run on this driver", key="images.vllm"),
                 **({"driver_cuda": supports.removeprefix("CUDA ")} if version else {}))


_CAPABILITY = re.compile(r"Found GPU\d+ (?P<gpu>.+?) which is of cuda capability (?P<capability>\d+(?:\.\d+)?)")


def _no_kernel_image(evidence: Evidence) -> Diagnosis:
    gpu = evidence.read(_CAPABILITY)
    what = f"{gpu['gpu']} (compute capability {gpu['capability']})" if gpu else "this GPU"
    severity = Severity.advisory if gpu else Severity.fatal
    return found(evidence, Cause.no_kernel_image, f"this vLLM/PyTorch build has no kernels for {what}",
                 Fix(f"use a build with Blackwell kernels (sm_120 RTX PRO 6000, sm_121 GB10 need CUDA 12.8+ builds): "
                     f"NVIDIA's image, images.vllm: {_NGC_IMAGE} or newer", key="images.vllm", value=_NGC_IMAGE),
                 severity=severity, **({"capability": gpu["capability"]} if gpu else {}))


_BF16_GPU = re.compile(r"Your (?P<gpu>.+?) GPU has compute capability (?P<capability>\d+\.\d+)")


def _bfloat16_unsupported(evidence: Evidence) -> Diagnosis:
    gpu = evidence.read(_BF16_GPU)
    what = f"{gpu['gpu']} (compute capability {gpu['capability']})" if gpu else "this GPU"
    return found(evidence, Cause.bfloat16_unsupported,
                 f"the model's dtype is bfloat16, which {what} cannot compute: it needs compute capability 8.0 "
                 "(Ampere) or newer",
                 Fix("run it in float16: add --dtype half to vllm.extra_args (it overrides the hardware profile's "
                     "--dtype); a model trained in bfloat16 may overflow in float16, so check its answers, or use a "
                     "GPU of compute capability 8.0+", key="vllm.extra_args", flag="--dtype", value="half"),
                 **({"capability": gpu["capability"]} if gpu else {}))


_QUANT = re.compile(r"quantization method (?P<method>\w+) is not supported for the current GPU\. "
                    r"Minimum capability: (?P<minimum>\d+)\. Current capability: (?P<current>\d+)")
# compressed-tensors' check, raised as a tuple of strings: ('Quantization scheme is not supported for ',
# 'the current GPU. Min capability: 80. ', 'Current capability: 75.')
_SCHEME = re.compile(r"Quantization scheme is not supported for \W+the current GPU\. Min capability: (?P<minimum>\d+)"
                     r"\. \W+Current capability: (?P<current>\d+)")


def _quantization_unsupported(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_QUANT) or evidence.read(_SCHEME)
    scheme = "method" not in values and bool(values)
    method = values.get("method") or ("fp8" if "fp8" in evidence.line.lower() else "mxfp4")
    if scheme:
        summary = (f"the model's quantization scheme needs compute capability {values['minimum']}; this GPU has "
                   f"{values['current']}")
        return found(evidence, Cause.quantization_unsupported, summary,
                     Fix("pick a model profile whose weights this GPU runs (`model:` in stack.yaml; `stackctl "
                         "profiles`): a BF16/FP16 one, or AWQ/GPTQ on older GPUs", key="model"))
    if values:
        summary = (f"{method} weights need compute capability {values['minimum']}; this GPU has "
                   f"{values['current']}")
    elif "sm_121" in evidence.line:
        summary = "the MXFP4 MoE kernels do not build for sm_121 (DGX Spark GB10)"
    else:
        summary = f"this GPU has no {method.upper()} (e4m3) support: FP8 needs sm_89 or newer"
    if method == "fp8":
        text = ("pick a model profile without FP8 weights (`model:` in stack.yaml, e.g. a BF16 or AWQ one) and add "
                "--kv-cache-dtype auto to vllm.extra_args (it overrides the profile's fp8 KV cache)")
    elif method == "mxfp4" and "sm_121" not in evidence.line:
        # vLLM's first MXFP4 support wanted Blackwell (capability 100); later releases run it on Hopper,
        # Ampere and older through Marlin/Triton kernels, so the engine is what to change first.
        text = ("use a newer vLLM: set images.vllm in stack.yaml to a newer image (later releases run MXFP4 weights "
                "on Hopper, Ampere and older GPUs through Marlin/Triton kernels; `stackctl doctor` compares the image's "
                "vLLM with the first release that serves the model's architecture, not its kernels for this GPU); if it "
                "still refuses this GPU, pick a BF16 model profile (`model:`; `stackctl profiles`)")
        return found(evidence, Cause.quantization_unsupported, summary, Fix(text, key="images.vllm"),
                     quantization=method)
    else:
        text = f"pick a BF16 or FP8 model profile (`model:` in stack.yaml; `stackctl profiles`): {method} does not run here"
    return found(evidence, Cause.quantization_unsupported, summary, Fix(text, key="model"), quantization=method)


def _attention_sinks_unsupported(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.attention_sinks_unsupported,
                 "the model (gpt-oss) uses attention sinks, which the selected attention backend (FlashInfer / "
                 "FlashAttention 2) does not support here",
                 Fix("add --attention-backend TRITON_ATTN to vllm.extra_args (older engines: set "
                     "VLLM_ATTENTION_BACKEND=TRITON_ATTN in vLLM's environment, and unset it if it names FLASHINFER)",
                     key="vllm.extra_args", flag="--attention-backend", value="TRITON_ATTN"))


def _cuda_forked_subprocess(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.cuda_forked_subprocess,
                 "CUDA was initialised before vLLM forked its worker processes, and a forked child cannot use it",
                 Fix("start the workers with spawn: VLLM_WORKER_MULTIPROC_METHOD: spawn under vllm.environment in "
                     "stack.yaml, then `stackctl up`", key="vllm.environment", env="VLLM_WORKER_MULTIPROC_METHOD",
                     value="spawn"))


def _ptxas_unknown_arch(evidence: Evidence) -> Diagnosis:
    arch = evidence.read(re.compile(r"Value '(?P<arch>sm_\w+)' is not defined")).get("arch", "this GPU")
    return found(evidence, Cause.ptxas_unknown_arch,
                 f"Triton's bundled ptxas is older than {arch}, so it cannot compile kernels for this GPU",
                 Fix("point TRITON_PTXAS_PATH at CUDA 13's ptxas (e.g. /usr/local/cuda/bin/ptxas) in vLLM's "
                     f"environment, or use NVIDIA's image (images.vllm: {_NGC_IMAGE})",
                     env="TRITON_PTXAS_PATH", value="/usr/local/cuda/bin/ptxas"), arch=arch)


def _cpu_attention_head_size(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.cpu_attention_head_size,
                 "vLLM's CPU attention rejects this model's head size (16 fails, 64 and up work)",
                 Fix("regenerate the demo model with `stackctl demo-model --force`, or use a model with head_dim >= 64 "
                     "(vllm.model_path)", key="vllm.model_path"))

def _ptx_toolchain_unsupported(evidence: Evidence) -> Diagnosis:
    """Kernels shipped as PTX are compiled by the driver when first run: a driver older than the CUDA
    that built them refuses (cudaErrorUnsupportedPtxVersion). NGC images start through NVIDIA's
    entrypoint (/opt/nvidia/nvidia_entrypoint.sh), which turns on CUDA forward compatibility where the
    GPU allows it; an entrypoint replaced (Compose `entrypoint:`, `docker run --entrypoint`) skips it."""
    return found(evidence, Cause.ptx_toolchain_unsupported,
                 "the engine's GPU kernels were compiled (as PTX) by a newer CUDA than the host's NVIDIA driver "
                 "supports, so the driver refuses to load them (cudaErrorUnsupportedPtxVersion)",
                 Fix("keep the image's own ENTRYPOINT: NGC images start through nvidia_entrypoint.sh, which turns on "
                     "CUDA forward compatibility for a newer CUDA than the driver's; a replaced entrypoint (`entrypoint:` "
                     "in a Compose override, `docker run --entrypoint`, a wrapper script) skips it. stackctl renders no "
                     "entrypoint for NGC images (`stackctl render` shows the vllm service; `stackctl doctor`'s "
                     "vllm-entrypoint row reads the image's). Otherwise update the host driver to one that supports the "
                     "image's CUDA (`nvidia-smi` shows the CUDA it supports), or set images.vllm to an image built "
                     "for that CUDA; natively, a vLLM/torch wheel built for it; then `stackctl up`", key="images.vllm"))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.no_gpu,
              r"No CUDA GPUs are available|Failed to infer device type|No platform detected, vLLM is running on "
              r"UnspecifiedPlatform|NVMLError_LibraryNotFound|NVML Shared Library Not Found"
              r"|Found no NVIDIA driver on your system|libcuda\.so\.1: cannot open shared object file", _no_gpu,
              CONSEQUENCE),
    signature(Cause.driver_too_old,
              r"NVIDIA driver on your system is too old|CUDA driver version is insufficient for CUDA runtime"
              r"|forward compatibility was attempted on non supported HW", _driver_too_old),
    signature(Cause.no_kernel_image, r"no kernel image is available for execution on the device", _no_kernel_image),
    signature(Cause.no_kernel_image, r"Found GPU\d+ .+ which is of cuda capability", _no_kernel_image, ADVISORY),
    signature(Cause.bfloat16_unsupported,
              r"Bfloat16 is only supported on GPUs with compute capability|'\.bf16' requires \.target sm_80",
              _bfloat16_unsupported),
    signature(Cause.quantization_unsupported,
              r"quantization method \w+ is not supported for the current GPU|Quantization scheme is not supported for"
              r"|type fp8e4nv not supported in this "
              r"architecture|Feature '\.tile::scatter4' not supported on \.target 'sm_121a?'",
              _quantization_unsupported),
    signature(Cause.attention_sinks_unsupported,
              r"does not support attention sinks|attention sinks not supported|sink setting not supported"
              r"|Sinks are only supported in FlashAttention 3", _attention_sinks_unsupported),
    signature(Cause.cuda_forked_subprocess, r"Cannot re-initialize CUDA in forked subprocess", _cuda_forked_subprocess),
    signature(Cause.ptxas_unknown_arch, r"ptxas(?:-blackwell)? fatal\s*: Value 'sm_\w+' is not defined",
              _ptxas_unknown_arch),
    signature(Cause.ptx_toolchain_unsupported, r"provided PTX was compiled with an unsupported toolchain"
              r"|cudaErrorUnsupportedPtxVersion|CUDA_ERROR_UNSUPPORTED_PTX_VERSION", _ptx_toolchain_unsupported),
    signature(Cause.cpu_attention_head_size,
              r"Unsupported CPU attention configuration|head_size .* is not supported", _cpu_attention_head_size),
)
