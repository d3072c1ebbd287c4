"""The NVIDIA container runtime failing to hand the GPU to a container: driver files (libraries,
nvidia-smi) the image ships itself, a container started without the runtime (no nvidia-smi inside), the runtime's hook
called directly where it must not be (Jetson's csv mode, CDI mode), device rules the runtime may not
add to a cgroup v2 container (rootless Docker), a CDI spec whose hook binary is not installed
(nvidia-cdi-hook, a separate binary since toolkit 1.16), toolkit 1.17.0's IMEX default refusing
legacy images, an old libnvidia-container misreading the driver's GPU listing, and WSL without GPU
support."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import (
    CONSEQUENCE,
    DOCTOR_GPU_RUNTIME,
    Signature,
    found,
    images_key,
    signature,
)
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix

_RUNTIME = ("run it with the NVIDIA runtime: stackctl's Compose file reserves the GPU (`deploy.resources.reservations."
            "devices` with `driver: nvidia`), like `docker run --gpus all`; with Docker's runtime configured by "
            "`sudo nvidia-ctk runtime configure --runtime=docker` (" + DOCTOR_GPU_RUNTIME + ")")


def _image_key(evidence: Evidence) -> str:
    # The GPU's container is the engine's unless the log says whose it is.
    return images_key(evidence, default="images.vllm") or "images.vllm"


# Any driver file the runtime mounts from the host (a library, nvidia-smi and the driver's other
# programs, firmware) that the image already has: libnvidia-container cannot create its mount point.
_DRIVER_FILE = re.compile(r"file creation failed: \S*/(?P<file>[^/\s:]+): file exists")


def _driver_files_conflict(evidence: Evidence) -> Diagnosis:
    driver_file = evidence.read(_DRIVER_FILE).get("file", "libnvidia-ml.so.1")
    library = ".so" in driver_file
    what = "library" if library else "file"
    key = _image_key(evidence)
    return found(evidence, Cause.container_driver_libs_conflict,
                 f"the image carries its own copy of the NVIDIA driver {what} {driver_file}, which the NVIDIA runtime "
                 "mounts from the host: the two collide and the container does not start",
                 Fix(f"the driver's user-space files ({driver_file}) must come from the host, never from the image: set "
                     f"{key} in stack.yaml to an image built on nvidia/cuda whose CUDA version the host driver "
                     "supports (NGC and vllm/vllm-openai images are), or rebuild yours to remove the driver files "
                     "from the image (`apt remove libnvidia-compute-*` and the nvidia-utils package that brings "
                     "nvidia-smi, and remove any nvidia-smi or libnvidia-ml.so.1 another step copied into the image, "
                     "as images built for WSL with the driver's libraries do: the runtime's mount of the host's copy "
                     "fails on it with \"file exists\"); then `stackctl up`",
                     key=key), file=driver_file)


def _runtime_missing(evidence: Evidence) -> Diagnosis:
    key = _image_key(evidence)
    return found(evidence, Cause.container_runtime_missing,
                 "nvidia-smi is not in the container: the NVIDIA runtime did not inject the driver's tools, so the "
                 "container ran without the GPU (no --gpus / runtime, or an image that does not ask for it)",
                 Fix(f"{_RUNTIME}. The runtime injects nvidia-smi and the driver only when the container asks: "
                     "NVIDIA_VISIBLE_DEVICES and NVIDIA_DRIVER_CAPABILITIES=compute,utility, which a CUDA base image "
                     f"(nvidia/cuda, NGC) sets; a plain ubuntu image under nvidia-docker gets no GPU. Keep {key} an "
                     "image built on nvidia/cuda; then `stackctl up`", key=key))


def _runtime_hook_missing(evidence: Evidence) -> Diagnosis:
    amd = "AMD CDI" in evidence.line
    return found(evidence, Cause.no_gpu_runtime,
                 "Docker's --gpus found no NVIDIA runtime hook (nvidia-container-runtime-hook is not installed or not "
                 "in the daemon's PATH)" + (", so it fell through to its AMD CDI driver" if amd else ""),
                 Fix("install (or reinstall) the NVIDIA container toolkit package, which puts nvidia-container-runtime-"
                     "hook in /usr/bin: `sudo apt install --reinstall nvidia-container-toolkit`, `sudo nvidia-ctk "
                     "runtime configure --runtime=docker` and `sudo systemctl restart docker` (it reads PATH at start); "
                     + DOCTOR_GPU_RUNTIME + " (not the hook: `ls /usr/bin/nvidia-container-runtime-hook`). With the nvidia runtime configured, --runtime=nvidia (Compose: "
                     "`runtime: nvidia`) instead of --gpus all also works, without Docker's --gpus lookup"))


def _cuda_init_unknown(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.cuda_init_unknown,
                 "CUDA could not initialise inside the container (cuInit: CUDA_ERROR_UNKNOWN) although the host's GPU "
                 "works: the driver pieces the container toolkit mounted do not work together",
                 Fix("if it began after an NVIDIA Container Toolkit update (`nvidia-ctk --version`; the toolkit and "
                     "libnvidia-container packages), roll back the container toolkit: downgrade both packages to the "
                     "version that worked (e.g. 1.19.0 where 1.19.1 broke it) and `sudo systemctl restart docker`, "
                     "until a fixed release; otherwise load nvidia-uvm on the host (`sudo modprobe nvidia-uvm`; after "
                     "a suspend, reload it) and check `docker run --rm --gpus all nvidia/cuda:12.8.0-base-ubuntu24.04 "
                     "nvidia-smi`"))


_MODE = re.compile(r"(?:Auto-detected|Using requested) mode as '?(?P<mode>\w+)'?|requested mode '(?P<requested>\w+)'")


def _hook_direct(evidence: Evidence) -> Diagnosis:
    # The hook states its mode on its own line, just before its refusal.
    match = _MODE.search(" ".join(evidence.lines[max(0, evidence.index - 2): evidence.index + 1]))
    mode = (match.group("mode") or match.group("requested") or "") if match else ""
    service = evidence.context.service
    if mode == "csv":
        exporter = service == "gpu-exporter"
        text = ("this is a Jetson (Tegra) board, where the NVIDIA runtime works in csv mode and Docker's --gpus "
                "(Compose's GPU reservation) is not supported: run the container with `runtime: nvidia` instead. "
                "DCGM, and so dcgm-exporter, is not supported on Jetson: set images.gpu-exporter to an nvidia-smi "
                "based exporter (utkuozdemir/nvidia_gpu_exporter) or turn services.monitoring off; then `stackctl up`")
        return found(evidence, Cause.gpu_hook_direct,
                     "the NVIDIA runtime hook was called directly (--gpus) on a Jetson board (csv mode), which is not "
                     "supported", Fix(text, key="images.gpu-exporter" if exporter else None), mode=mode)
    return found(evidence, Cause.gpu_hook_direct,
                 f"the NVIDIA runtime hook was called directly (--gpus){' in ' + mode + ' mode' if mode else ''}, "
                 "which this toolkit configuration does not support",
                 Fix("in CDI mode the GPU comes from the NVIDIA runtime or a CDI device, not from --gpus: run the "
                     "container with `runtime: nvidia` (`sudo nvidia-ctk runtime configure --runtime=docker`, then "
                     "`sudo systemctl restart docker`), or set nvidia-container-runtime's mode back to auto in "
                     "/etc/nvidia-container-runtime/config.toml; then `stackctl up`"), **({"mode": mode} if mode else {}))


def _device_rules_denied(evidence: Evidence) -> Diagnosis:
    # libnvidia-container edits the container's cgroup v2 eBPF device filter itself; a rootless daemon
    # may never do that, and a hardened kernel (eBPF JIT blinding) does not let it read the program back.
    return found(evidence, Cause.gpu_device_rules_denied,
                 "the NVIDIA runtime could not add the GPU to the container's cgroup device rules (cgroup v2's eBPF "
                 "device filter): Docker runs rootless, or the kernel does not let the toolkit change the filter",
                 Fix("with rootless Docker, set `no-cgroups = true` in /etc/nvidia-container-runtime/config.toml "
                     "(NVIDIA's rootless setup: `sudo nvidia-ctk config --set nvidia-container-cli.no-cgroups --in-place`); "
                     "otherwise upgrade the NVIDIA Container Toolkit (current releases no longer edit the eBPF "
                     "program) or hand the GPU over by CDI (`sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`), "
                     "then `sudo systemctl restart docker` and `stackctl up`"))


_HOOK_PATH = re.compile(r"fork/exec (?P<path>/\S*nvidia-cdi-hook)")


def _nvidia_cdi_hook_missing(evidence: Evidence) -> Diagnosis:
    """The CDI spec (written by `nvidia-ctk cdi generate`) names nvidia-cdi-hook as the hook to run;
    since toolkit 1.16 that is its own binary, which a partial install or an older package lacks."""
    path = evidence.read(_HOOK_PATH).get("path", "/usr/bin/nvidia-cdi-hook")
    return found(evidence, Cause.nvidia_cdi_hook_missing,
                 f"the GPU's CDI spec runs the hook {path}, which is not installed: the container does not start",
                 Fix("install nvidia-cdi-hook: reinstall nvidia-container-toolkit 1.16 or later from NVIDIA's "
                     "repository (`sudo apt install --reinstall nvidia-container-toolkit nvidia-container-toolkit-base`; "
                     f"a distribution package must ship the nvidia-cdi-hook binary at {path}), then regenerate the spec "
                     "so its hooks point at it (`sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`), "
                     "`sudo systemctl restart docker` and `stackctl up`"), path=path)


def _nvidia_toolkit_imex_channel(evidence: Evidence) -> Diagnosis:
    """Toolkit 1.17.0-1.17.2 read a missing NVIDIA_IMEX_CHANNELS as `all` for legacy images (CUDA_VERSION
    set, NVIDIA_REQUIRE_CUDA not), which nvidia-container-cli cannot parse; 1.17.3 fixed it."""
    return found(evidence, Cause.nvidia_toolkit_imex_channel,
                 "the NVIDIA Container Toolkit (1.17.0 to 1.17.2) asks for IMEX channel `all` for an image it treats "
                 "as legacy, and its own nvidia-container-cli refuses that: the container does not start",
                 Fix("upgrade the NVIDIA Container Toolkit to 1.17.3 or later (`sudo apt install "
                     "nvidia-container-toolkit`; `nvidia-ctk --version` shows the version), or pin nvidia-container-toolkit "
                     "1.16.2 until you can; then `sudo systemctl restart docker` and `stackctl up`. An image that sets "
                     "NVIDIA_REQUIRE_CUDA (every nvidia/cuda and NGC image) is not treated as legacy"))


_FAILED_HOOK = re.compile(r"error executing hook `?(?P<hook>/\S*nvidia-(?:ctk|cdi-hook))`?")


def _nvidia_toolkit_hook_failed(evidence: Evidence) -> Diagnosis:
    """The CDI spec's hooks (`nvidia-ctk hook ...`, `nvidia-cdi-hook ...`) ran and failed: the spec was
    written by one toolkit release and the installed hook binary is another (an old nvidia-ctk left by
    a repository that no longer updates it, or a release with a hook bug, 1.17.0's symlinks)."""
    hook = evidence.read(_FAILED_HOOK).get("hook", "nvidia-ctk")
    return found(evidence, Cause.nvidia_toolkit_hook_failed,
                 f"the NVIDIA Container Toolkit's hook {hook}, which the GPU's CDI spec runs for every container, "
                 "failed: the container does not start",
                 Fix("update the NVIDIA Container Toolkit, both packages (`sudo apt install nvidia-container-toolkit "
                     "nvidia-container-toolkit-base`; `nvidia-ctk --version` must show the release the spec was "
                     "generated with, or newer). If apt offers no newer release, the repository file is stale: "
                     "/etc/apt/sources.list.d/nvidia-container-toolkit.list (older installs: libnvidia-container.list) "
                     "must point at NVIDIA's current repository, uncommented after a distribution upgrade. Then "
                     "regenerate the spec with the installed toolkit (`sudo nvidia-ctk cdi generate --output=/etc/cdi/"
                     "nvidia.yaml`) and `stackctl up`"), hook=hook)


# Where libnvidia-container looked for the GPU's entry under /proc/driver/nvidia: a GPU's name read as
# a path ("/GeForce", "/Tesla V100-SXM2-16GB") or a bus id cut short ("/proc/driver/nvidia/gpus/cfdd:00:00.0"
# for 03f8cfdd:00:00.0).
_MISREAD_PATH = re.compile(r"stat failed: (?P<path>/proc/driver/nvidia/\S+?|/[^/:\\\n]+?): no such file or directory")


def _libnvidia_container_outdated(evidence: Evidence) -> Diagnosis:
    """Older libnvidia-container releases misread what the driver lists of each GPU (a name where a path
    belongs, a long PCI domain cut short) and then fail to stat it; newer releases read it right."""
    path = evidence.read(_MISREAD_PATH).get("path", "")
    return found(evidence, Cause.libnvidia_container_outdated,
                 f"the NVIDIA runtime's libnvidia-container looked for the GPU at {path or 'a path'} that does not "
                 "exist: it misread the driver's listing of the GPU (its name, or a bus id with a long PCI domain), "
                 "a bug of older libnvidia-container releases; the container does not start",
                 Fix("update libnvidia-container and the NVIDIA Container Toolkit together from NVIDIA's repository "
                     "(`sudo apt install libnvidia-container1 libnvidia-container-tools nvidia-container-toolkit`; "
                     "`nvidia-container-cli --version` shows the release), then `sudo systemctl restart docker` and "
                     "`stackctl up`. If apt offers no newer release, /etc/apt/sources.list.d/nvidia-container-toolkit.list "
                     "(older installs: libnvidia-container.list) must point at NVIDIA's current repository"),
                 **({"path": path} if path else {}))


_LDCONFIG = re.compile(r"ldcache error: process (?P<path>/\S+?) failed with error code: (?P<code>\d+)")


def _nvidia_ldconfig_failed(evidence: Evidence) -> Diagnosis:
    """nvidia-container-cli runs the host's ldconfig (config.toml's `ldconfig = "@PATH"`, @ meaning the
    host's) inside the container to register the driver's libraries. Debian and Ubuntu ship the real
    program as /sbin/ldconfig.real (/sbin/ldconfig is a wrapper script); other distributions as
    /sbin/ldconfig: a config.toml from another distribution names a program that is not there (127)."""
    values = evidence.read(_LDCONFIG)
    path, code = values.get("path", "/sbin/ldconfig"), values.get("code", "")
    missing = code == "127"
    why = (f"{path} is not there (error code 127: no such program)" if missing else
           f"{path} failed (error code {code or 'not stated'})")
    return found(evidence, Cause.nvidia_ldconfig_failed,
                 f"the NVIDIA container runtime runs the host's ldconfig to register the driver's libraries in the "
                 f"container, and {why}: the container does not start",
                 Fix("the ldconfig line of /etc/nvidia-container-runtime/config.toml must name the host's real ldconfig: "
                     "`ldconfig = \"@/sbin/ldconfig.real\"` on Debian and Ubuntu, `ldconfig = \"@/sbin/ldconfig\"` on "
                     "RHEL, Fedora, SUSE and Arch (`ls -l /sbin/ldconfig*` shows which exists; `sudo nvidia-ctk config "
                     "--set nvidia-container-cli.ldconfig=@/sbin/ldconfig.real --in-place` sets it)"
                     + ("" if missing else "; if it names the right program, run it on the host (`sudo "
                                           f"{path}`) to see why it fails, and update the NVIDIA Container Toolkit")
                     + "; then `sudo systemctl restart docker` and `stackctl up`"),
                 path=path, **({"code": int(code)} if code else {}))


def _wsl_no_gpu_adapter(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.wsl_no_gpu_adapter,
                 "Docker runs under WSL, but WSL exposes no GPU adapter: no NVIDIA GPU reaches Linux there",
                 Fix("GPU support needs WSL 2 (not WSL 1: `wsl --set-version DISTRO 2`, Docker Desktop's WSL 2 "
                     "backend), a current WSL kernel (`wsl --update`, then `wsl --shutdown`) and the Windows NVIDIA "
                     "driver with WSL support (installed on Windows, never inside WSL); `nvidia-smi` inside WSL must "
                     "list the GPU. A machine without an NVIDIA GPU runs the CPU stack: `hardware: cpu`, `model: tiny`"))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.container_driver_libs_conflict, r"file creation failed: \S*/[^/\s:]+: file exists",
              _driver_files_conflict),
    signature(Cause.container_runtime_missing, r"exec: \\?\"nvidia-smi\\?\": executable file not found in \$PATH",
              _runtime_missing),
    signature(Cause.no_gpu_runtime, r"exec: \\?\"nvidia-container-runtime-hook\\?\": executable file not found"
              r"|AMD CDI spec not found", _runtime_hook_missing),
    signature(Cause.cuda_init_unknown, r"cuInit\(0\) failed -> CUDA_ERROR_UNKNOWN", _cuda_init_unknown, CONSEQUENCE),
    signature(Cause.gpu_hook_direct, r"invoking the NVIDIA Container Runtime Hook directly", _hook_direct),
    signature(Cause.gpu_device_rules_denied, r"nvidia-container-cli: mount error: failed to add device rules", _device_rules_denied),
    signature(Cause.nvidia_cdi_hook_missing, r"fork/exec \S*nvidia-cdi-hook: no such file or directory",
              _nvidia_cdi_hook_missing),
    signature(Cause.nvidia_toolkit_imex_channel, r"error parsing IMEX info: unsupported IMEX channel value",
              _nvidia_toolkit_imex_channel),
    signature(Cause.nvidia_toolkit_hook_failed, r"error executing hook `?/\S*nvidia-(?:ctk|cdi-hook)`? \(exit code",
              _nvidia_toolkit_hook_failed),
    signature(Cause.libnvidia_container_outdated,
              r"mount error: stat failed: (?:/proc/driver/nvidia/|/[^/:\\]+: no such file)",
              _libnvidia_container_outdated),
    signature(Cause.nvidia_ldconfig_failed, r"nvidia-container-cli: ldcache error: process \S+ failed with error code",
              _nvidia_ldconfig_failed),
    signature(Cause.wsl_no_gpu_adapter, r"WSL environment detected but no adapters were found", _wsl_no_gpu_adapter),
)
