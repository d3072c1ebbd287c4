"""GPU and driver: a device is visible, Blackwell runs the open kernel module with its firmware,
the driver is new enough, and the vLLM image's CUDA supports both the GPU and the driver."""

from __future__ import annotations

import re

from stackctl.doctor.context import DoctorContext
from stackctl.doctor.result import CheckResult, fail, ok, warn
from stackctl.host.gpu import GpuInfo, driver_version, major_version

MIN_DRIVER = 570
# Blackwell (sm_100 and up: B200, GB202 = sm_120, GB10 = sm_121) is only supported by the open
# kernel module; the proprietary one loads, then nvidia-smi finds no device.
OPEN_MODULE_FROM_MAJOR = 10


def check_gpu_visible(ctx: DoctorContext) -> CheckResult:
    name = "gpu"
    if not ctx.config.hardware_profile.has_gpu:
        return ok(name, f"not needed (hardware: {ctx.config.hardware})")
    query = ctx.gpu_query
    if not query.gpus:
        return fail(name, query.error, "install the NVIDIA driver (e.g. `sudo apt install nvidia-driver-580-open`) and reboot; "
                    "`nvidia-smi` must list the GPU")
    gpus = "; ".join(f"{gpu.name} ({gpu.sm or 'sm ?'}, {_memory(gpu)})" for gpu in query.gpus)
    wanted = ctx.config.hardware_profile.sm
    if wanted and not any(gpu.sm == wanted for gpu in query.gpus):
        return warn(name, f"{gpus}; the '{ctx.config.hardware}' profile expects {wanted}",
                    "pick the hardware profile that matches this GPU (`stackctl profiles`), e.g. hardware: generic")
    return ok(name, gpus)


def check_driver(ctx: DoctorContext) -> CheckResult:
    name = "driver"
    if not ctx.config.hardware_profile.has_gpu:
        return ok(name, f"not needed (hardware: {ctx.config.hardware})")
    version_text = ctx.facts.driver_version_text()
    gpus = ctx.gpu_query.gpus
    if version_text is None and not gpus:
        return fail(name, "no NVIDIA kernel module loaded (/proc/driver/nvidia/version missing)",
                    "install nvidia-driver-580-open (`sudo apt install nvidia-driver-580-open`) and reboot")
    version = driver_version(version_text, gpus)
    is_open = "open kernel module" in (version_text or "").lower()
    kind = "open kernel module" if is_open else "proprietary kernel module"
    major = major_version(version)
    found = f"driver {version or '?'} ({kind})"
    blackwell = [gpu for gpu in gpus if gpu.compute_cap and int(float(gpu.compute_cap)) >= OPEN_MODULE_FROM_MAJOR]
    wants_blackwell = int((ctx.config.hardware_profile.sm or "sm_0")[3:]) >= OPEN_MODULE_FROM_MAJOR * 10
    target = max(MIN_DRIVER, major or 0)
    if (blackwell or wants_blackwell) and version_text is not None and not is_open:
        return fail(name, f"{found}; Blackwell GPUs need the open kernel module",
                    f"install nvidia-driver-{target}-open (`sudo apt install nvidia-driver-{target}-open`) and reboot")
    if major is not None and major < MIN_DRIVER:
        return fail(name, f"{found}; vLLM on Blackwell needs >= {MIN_DRIVER}",
                    "install nvidia-driver-580-open (`sudo apt install nvidia-driver-580-open`) and reboot")
    for gpu in blackwell:
        firmware = _firmware(ctx.facts.gpu_information(gpu.bus_id))
        if firmware is None:
            return fail(name, f"{found}; no GPU firmware (GSP) loaded for {gpu.name} at {gpu.bus_id}",
                        f"install the firmware package that matches the driver (`sudo apt install nvidia-firmware-{major or target}`) "
                        f"or reinstall nvidia-driver-{target}-open, then reboot")
        found += f", GSP firmware {firmware}"
    return ok(name, found)


def check_cuda_image(ctx: DoctorContext) -> CheckResult:
    """The image's CUDA (stackctl/profiles/compat.yaml) against the GPU's kernels and the driver."""
    from stackctl.profiles.compat import best_image, cuda_serves_gpu, image_facts, min_driver

    name = "cuda-image"
    if not ctx.config.hardware_profile.has_gpu:
        return ok(name, f"not needed (hardware: {ctx.config.hardware})")
    if not ctx.runtime.needs_docker:
        return ok(name, f"not used (runtime: {ctx.runtime.name}; the engine check covers the native CUDA build)")
    image = str(ctx.services["vllm"].compose.get("image", ""))
    facts = image_facts(image)
    if facts is None:
        return ok(name, f"{image}: not an NGC image, its CUDA version is not checked")
    cuda, needs_driver = facts.cuda, min_driver(facts.cuda)
    found = f"{image}: CUDA {cuda}"
    gpus = ctx.gpu_query.gpus
    sms = {gpu.sm for gpu in gpus if gpu.sm} or ({ctx.config.hardware_profile.sm} - {None})
    major = ctx.driver_major
    architecture = ctx.config.model_profile.architecture
    for sm in sorted(sms):
        if not cuda_serves_gpu(cuda, sm):
            chosen = best_image(architecture, sm, major) or best_image(architecture, sm)
            target = chosen.reference if chosen else "a newer NGC tag"
            return fail(name, f"{found} has no {sm} kernels{' (GB10)' if sm == 'sm_121' else ''}",
                        f"set images.vllm: {target} in stack.yaml")
    if major is not None and major < needs_driver:
        chosen = best_image(architecture, min(sms) if sms else None, major)
        other = f", or set images.vllm: {chosen.reference} (runs on driver {major})" if chosen else ""
        return fail(name, f"{found} needs driver >= {needs_driver}, found {major}",
                    f"install nvidia-driver-{needs_driver}-open and reboot{other}")
    return ok(name, found + (f", GPU {', '.join(sorted(sm for sm in sms if sm))}" if sms else ""))


def _firmware(information: str | None) -> str | None:
    match = re.search(r"^GPU Firmware:\s*(\S+)", information or "", re.MULTILINE)
    if not match or match.group(1) in {"N/A", "[N/A]"}:
        return None
    return match.group(1)


def _memory(gpu: GpuInfo) -> str:
    return f"{gpu.memory_mib / 1024:.0f} GiB" if gpu.memory_mib else "unified memory"
