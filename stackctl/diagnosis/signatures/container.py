"""A container that cannot start, in Docker's and the NVIDIA container runtime's words: the image's
CUDA newer than the driver, no NVIDIA runtime or CDI spec, no driver loaded on the host, a driver
upgraded under a running kernel module, an image for another CPU, an image that cannot be pulled
(or not now: Docker Hub's rate limit), Docker itself out of reach or out of disk or without the kernel modules its bridge needs, a bind mount that
needs shared propagation, NVML denied the GPU's device nodes (SELinux), a Compose too old for GPU reservations, a GPU index the host lacks, and a
toolkit too old for cgroup v2."""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version

from stackctl.diagnosis.docker_disk import TAR_FILE_FULL, docker_disk_fix, writing_what
from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.image_tags import latest_missing, no_latest_fix
from stackctl.diagnosis.iptables_tables import TABLE_MISSING
from stackctl.diagnosis.signature import (
    CDI_REQUEST,
    CONSEQUENCE,
    DOCTOR_GPU_RUNTIME,
    Signature,
    found,
    images_entry,
    images_key,
    registry_login,
    signature,
)
from stackctl.diagnosis.signatures.docker_network import docker_iptables_table_missing
from stackctl.diagnosis.signatures.kernel_modules import NEW_KERNEL_WITHOUT_MODULES
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix
from stackctl.profiles.compat import min_driver, table

_TOOLKIT = ("install the NVIDIA Container Toolkit (`sudo apt install nvidia-container-toolkit`), then `sudo nvidia-ctk "
            "runtime configure --runtime=docker` and `sudo systemctl restart docker` (or a CDI spec: `sudo nvidia-ctk "
            "cdi generate --output=/etc/cdi/nvidia.yaml`); " + DOCTOR_GPU_RUNTIME + ". A host without an NVIDIA GPU "
            "runs the CPU stack: `hardware: cpu`, `model: tiny`")
_REQUIRED_CUDA = re.compile(r"unsatisfied condition: cuda ?>= ?(?P<cuda>\d+\.\d+)")


def _container_cuda_requirement(evidence: Evidence) -> Diagnosis:
    cuda = evidence.read(_REQUIRED_CUDA).get("cuda", "")
    driver = _driver_for(cuda)
    needs = f"driver >= {driver}" if driver else "a driver that supports it"
    return found(evidence, Cause.container_cuda_requirement,
                 f"the image is built for CUDA {cuda or '(newer)'}, which the host's NVIDIA driver does not support "
                 f"({needs}); the NVIDIA container runtime refused to start it",
                 Fix("update the host driver to a newer driver ("
                     + (f"the minimum driver for CUDA {cuda} is {driver}; " if driver else "")
                     + "`nvidia-smi` shows the CUDA version yours supports"
                     + (f"; e.g. `sudo apt install nvidia-driver-{driver}-open`, then reboot" if driver else "")
                     + "), or set images.vllm in stack.yaml to an image built for the CUDA your driver supports "
                     "(`stackctl doctor` names one from stackctl's compatibility table)", key="images.vllm",
                     value=str(driver) if driver else None),
                 **({"cuda": cuda} if cuda else {}), **({"min_driver": driver} if driver else {}))


def _driver_for(cuda: str) -> int | None:
    """The minimum driver for `cuda` from compat.yaml; None below the table's oldest CUDA."""
    try:
        wanted = Version(cuda)
        oldest = min(Version(row.cuda) for row in table().cuda_drivers)
    except (InvalidVersion, ValueError):
        return None
    return min_driver(cuda) if wanted >= oldest else None


def _nvidia_runtime_unregistered(evidence: Evidence) -> Diagnosis:
    """`runtime: nvidia` (or `--runtime=nvidia`) names a runtime the daemon has not registered; the
    device reservation stackctl's fragments use needs only the toolkit's hook."""
    return found(evidence, Cause.nvidia_runtime_unregistered,
                 "the container names the `nvidia` runtime (`runtime: nvidia`, `--runtime=nvidia`), which this Docker "
                 "daemon has not registered (no nvidia entry under runtimes in /etc/docker/daemon.json; Docker Desktop "
                 "has none)",
                 Fix("ask for the GPU with a device reservation instead of runtime: nvidia: stackctl's fragments use "
                     "`gpus: all`, the short form of deploy.resources.reservations.devices with `driver: nvidia` and "
                     "`capabilities: [gpu]`, which needs only the NVIDIA Container Toolkit, not a registered runtime; "
                     "drop `runtime: nvidia` from any override file (or `docker run --runtime=nvidia`, use `--gpus "
                     "all`). To keep runtime: nvidia, register it: `sudo nvidia-ctk runtime configure --runtime=docker` "
                     "and `sudo systemctl restart docker` (or CDI: `sudo nvidia-ctk cdi generate --output=/etc/cdi/"
                     "nvidia.yaml`); " + DOCTOR_GPU_RUNTIME))


def _no_gpu_runtime(evidence: Evidence) -> Diagnosis:
    cdi = "CDI" in evidence.text
    if cdi:
        return found(evidence, Cause.no_gpu_runtime, "the NVIDIA CDI spec does not list the GPUs Docker was asked for",
                     Fix(_TOOLKIT))
    # Docker's --gpus looks for the NVIDIA hook in the daemon's own filesystem: a daemon from a snap
    # never sees the host's toolkit, and a toolkit upgrade that removed the hook leaves it looking
    # installed. The log names neither; the fix says how to tell the three apart.
    return found(evidence, Cause.no_gpu_runtime,
                 "Docker has no NVIDIA runtime, so it cannot give the container the GPU (`gpus: all`)",
                 Fix("install the NVIDIA Container Toolkit if `nvidia-ctk --version` fails (`sudo apt install "
                     "nvidia-container-toolkit`); if it is installed, Docker's daemon still finds none when an upgrade "
                     "removed the hook it needs (`ls /usr/bin/nvidia-container-runtime-hook`): reinstall the toolkit (`sudo apt install "
                     "--reinstall nvidia-container-toolkit`; yum/dnf: remove the nvidia-container-toolkit package and "
                     "install it again); then `sudo nvidia-ctk runtime configure --runtime=docker` and `sudo "
                     "systemctl restart docker` (or a CDI spec: `sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia."
                     "yaml`); " + DOCTOR_GPU_RUNTIME + " (not the hook: the `ls` above does). Docker installed as a snap (`snap list docker` lists it) "
                     "cannot use the host's toolkit: remove the snap Docker (`sudo snap remove docker`) and install "
                     "docker-ce from Docker's repository. " + CDI_REQUEST + ". A host without an NVIDIA GPU runs the "
                     "CPU stack: `hardware: cpu`, `model: tiny`"))


def _nvml_insufficient_permissions(evidence: Evidence) -> Diagnosis:
    """NVML loaded inside the container (the runtime gave it the libraries) but may not open the GPU's
    device nodes: most often SELinux, whose container label keeps a confined process from /dev/nvidia*
    (Fedora, RHEL and their kin enforce it), else a rootless engine whose user lacks the nodes' group."""
    return found(evidence, Cause.nvml_insufficient_permissions,
                 "NVML runs inside the container but may not open the GPU's device nodes (Insufficient "
                 "Permissions): on a host with SELinux enforcing, the container's label keeps it from /dev/nvidia*",
                 Fix("the toolkit works (NVML loaded); SELinux denies the container the devices: check `getenforce` "
                     "(Enforcing) and `sudo ausearch -m avc -ts recent`. Run the GPU container with SELinux "
                     "labelling off for it: `security_opt: [label=disable]` on the service in Compose (`docker run "
                     "--security-opt label=disable`; stackctl has no stack.yaml key for it: add it to the vllm and "
                     "gpu-exporter services with an override file passed to `docker compose -f`), or let containers "
                     "use the GPU host-wide with `sudo setsebool -P container_use_devices on` (newer container-selinux: "
                     "container_use_xserver_devices, the label of /dev/nvidia*); `--privileged` also "
                     "works but grants far more. Under rootless Podman or Docker the device nodes' group must be "
                     "kept (`--group-add keep-groups`, or the gid in the CDI spec). Do not switch SELinux off for the "
                     "whole host"))


def _container_without_gpu(evidence: Evidence) -> Diagnosis:
    """A container that runs but finds no NVIDIA library or tool inside: Docker started it without
    the NVIDIA runtime handing it the GPU (the GPU exporters and vLLM say so in their own words)."""
    service = evidence.context.service
    # nvidia-smi's exit code 12: it ran, but NVML's library would not load (a hand-mounted symlink chain).
    smi = " (nvidia-smi exits 12: the NVML library libnvidia-ml.so would not load)" if "status 12" in evidence.line else ""
    who = "the container" if service in ("docker", "compose") else f"the {service} container"
    if service == "gpu-exporter" and _LIBRARY_NOT_FOUND.search(evidence.line) and _on_arm64(evidence):
        return _nvml_not_injected_arm64(evidence, who)
    return found(evidence, Cause.no_gpu_runtime,
                 f"{who} has no working NVIDIA driver libraries (NVML) inside{smi}: Docker started "
                 "it without the NVIDIA runtime giving it the GPU",
                 Fix("the container needs the GPU from the NVIDIA runtime: stackctl's fragment asks for it (`gpus: "
                     "all`, the Compose form of `docker run --gpus all` / `--runtime=nvidia`), so Docker must have "
                     "the nvidia runtime: install the NVIDIA Container Toolkit, `sudo nvidia-ctk runtime configure "
                     "--runtime=docker` (it adds the runtime to /etc/docker/daemon.json; a hand-edited daemon.json "
                     "with a wrong path or default-runtime breaks it) and `sudo systemctl restart docker` (or CDI: `sudo "
                     "nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`); "
                     + DOCTOR_GPU_RUNTIME + ". Do not hand-mount libnvidia-ml.so or nvidia-smi into the "
                     "container: a mounted symlink without its versioned target still fails; the runtime mounts "
                     "the driver's own libraries"))


# NVML's library itself not found in the container (not NVML failing once loaded): dcgm-exporter's
# ERROR_LIBRARY_NOT_FOUND, nvidia-smi's exit code 12 and its own words, gonvml's.
_LIBRARY_NOT_FOUND = re.compile(r"ERROR_LIBRARY_NOT_FOUND|couldn't find libnvidia-ml\.so|could not load NVML library"
                                r"|exit status 12\b", re.IGNORECASE)
# The log's own sign of an arm64 host: DCGM's build line (arch:aarch64), a library path, an image's platform.
_ARM64_IN_LOG = re.compile(r"\baarch64\b|\barm64\b|\bsbsa\b", re.IGNORECASE)


def _on_arm64(evidence: Evidence) -> bool:
    if evidence.context.machine is not None:
        return evidence.context.machine in ("aarch64", "arm64")
    return any(_ARM64_IN_LOG.search(line) for line in evidence.lines)


def _nvml_not_injected_arm64(evidence: Evidence, who: str) -> Diagnosis:
    """On arm64 servers (GB200/GB300, GH200; DGX Spark's GB10) recent dcgm-exporter images start without
    libnvidia-ml.so.1 although the host has it and the runtime injects it on amd64 (dcgm-exporter#621:
    4.4.2-4.7.1 and later); mounting the host's library directory is the reported workaround."""
    return found(evidence, Cause.nvml_not_injected_arm64,
                 f"{who} finds no NVML library (libnvidia-ml.so.1) on this arm64 host: the NVIDIA runtime did not "
                 "inject the driver's libraries into it, as it does on amd64",
                 Fix("first check the runtime itself: `docker run --rm --gpus all nvidia/cuda:12.8.0-base-ubuntu24.04 "
                     "nvidia-smi` must list the GPU (if it does not, set up the NVIDIA Container Toolkit: `sudo "
                     "nvidia-ctk runtime configure --runtime=docker`, `sudo systemctl restart docker`). If it does, "
                     "this image is one the runtime does not serve on arm64 (dcgm-exporter 4.4.2-4.7.1 and later on "
                     "GB200/GB300, GH200, DGX Spark): leave images.gpu-exporter unset in stack.yaml for stackctl's "
                     "default exporter (nvidia-smi based; on DGX Spark stackctl's own), or mount the driver libraries "
                     "from the host into this container: the host's whole /usr/lib/aarch64-linux-gnu, read-only "
                     "(it holds libnvidia-ml.so.1 and the versioned library it points to, which one mounted symlink "
                     "lacks); then `stackctl up`", key="images.gpu-exporter"))


def _gpu_access_lost(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.gpu_access_lost,
                 "the container lost its GPU: NVML fails with \"Unknown Error\" (with the systemd cgroup driver, a "
                 "`systemctl daemon-reload` on the host revokes running containers' access to /dev/nvidia*)",
                 Fix("recreate the containers (`stackctl down` then `stackctl up`); so that the next `systemctl "
                     "daemon-reload` does not take the GPU away again, create the /dev/char symlinks the cgroup rules need (`sudo nvidia-ctk system "
                     "create-dev-char-symlinks --create-all`, and the udev rule NVIDIA's toolkit notes give for "
                     "boot), or use CDI (`sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`)"))


def _gpu_driver_not_loaded(evidence: Evidence) -> Diagnosis:
    if "libnvidia-ml" in evidence.line:
        return _nvml_not_found(evidence)
    device = evidence.read(re.compile(r"custom device \"(?P<device>/dev/[\w-]+)\"")).get("device")
    what = f"{device} does not exist on the host" if device else "the NVIDIA driver is not loaded on the host"
    return found(evidence, Cause.gpu_driver_not_loaded,
                 f"{what}: the NVIDIA container runtime has no GPU to hand to the container",
                 Fix("make the host driver work first: `nvidia-smi` on the host must list the GPU (install the driver, "
                     "e.g. `sudo apt install nvidia-driver-580-open`, and reboot; `sudo modprobe nvidia nvidia_uvm` "
                     f"loads it). Where the driver worked before a kernel update, or modprobe says the module is not found, "
                     f"{NEW_KERNEL_WITHOUT_MODULES} (on Arch-based systems, a custom kernel included: reinstall the "
                     "nvidia-dkms package with the running kernel's headers, linux-*-headers, so DKMS builds the kernel "
                     "module for the running kernel); then "
                     "`stackctl up`"), **({"device": device} if device else {}))


def _nvml_not_found(evidence: Evidence) -> Diagnosis:
    """nvidia-container-cli cannot open libnvidia-ml.so.1: no driver on the host, or a toolkit that does
    not see the driver's libraries (a toolkit from another distribution's repository, Docker from a
    snap, a driver installed under another prefix)."""
    return found(evidence, Cause.gpu_driver_not_loaded,
                 "the NVIDIA container runtime cannot load the driver's NVML library (libnvidia-ml.so.1): no driver on "
                 "the host, or a Container Toolkit that does not find it",
                 Fix("`nvidia-smi` on the host must list the GPU (else install the driver, e.g. `sudo apt install "
                     "nvidia-driver-580-open`, and reboot); if it does, the NVIDIA Container Toolkit does not find the "
                     "driver's libraries: reinstall nvidia-container-toolkit from NVIDIA's repository for this "
                     "distribution (`sudo apt install nvidia-container-toolkit`), `sudo nvidia-ctk runtime configure "
                     "--runtime=docker`, `sudo systemctl restart docker` (Docker from a snap cannot use it: use Docker's "
                     "own packages). `stackctl doctor` checks that nvidia-smi lists the GPU and that Docker lists the nvidia "
                     "runtime or a CDI spec, not whether the toolkit finds the libraries: `docker run --rm --gpus all "
                     "ubuntu nvidia-smi` does"))


def _driver_library_mismatch(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.driver_library_mismatch,
                 "the NVIDIA driver was upgraded but the running kernel module is the old one (Driver/library "
                 "version mismatch)",
                 Fix("reboot the host (or unload and reload the nvidia kernel modules) so the module matches the "
                     "installed driver; `nvidia-smi` works again afterwards, then `stackctl up`"))


def _runtime_cuda_unknown(evidence: Evidence) -> Diagnosis:
    """libnvidia-container (before 1.1, which dropped CUDA) initialises CUDA on the host before each
    container; "unknown error" there is the host's driver in a state CUDA cannot use: a driver updated
    under the running kernel module, or its modules half-loaded. The reports' fix: a reboot, or reloading
    the modules; nvidia-smi on the host tells it from no driver at all."""
    return found(evidence, Cause.driver_library_mismatch,
                 "the NVIDIA container runtime could not initialise CUDA on the host (cuda error: unknown error): the "
                 "driver's kernel modules are not in a state CUDA can use, most often a driver updated under the "
                 "running module",
                 Fix("reboot the host (or unload and reload the nvidia kernel modules: `sudo rmmod nvidia_uvm "
                     "nvidia_drm nvidia_modeset nvidia`, then `sudo modprobe nvidia nvidia_uvm`) so the loaded module "
                     "matches the installed driver; `nvidia-smi` on the host must list the GPU afterwards (if it "
                     "does not, install the driver). libnvidia-container 1.1 and later no longer initialise CUDA here: "
                     "update the NVIDIA Container Toolkit if `nvidia-container-cli --version` is older; then "
                     "`stackctl up`"))


def _wrong_architecture(evidence: Evidence) -> Diagnosis:
    platforms = evidence.read(re.compile(r"image's platform \((?P<image>[^)]+)\) does not match the detected host "
                                         r"platform \((?P<host>[^)]+)\)"))
    summary = (f"the image is built for {platforms['image']} but this host is {platforms['host']}" if platforms
               else "the image's programs are built for another CPU architecture than this host's (exec format error)")
    key = images_key(evidence)
    host = f"here {platforms['host']}; " if platforms else ""
    return found(evidence, Cause.wrong_architecture, summary,
                 Fix(f"use an image built for this host's architecture ({host}`uname -m`: aarch64 on DGX Spark GB10): "
                     f"set {images_entry(key)} in stack.yaml to a multi-arch or arm64/amd64 tag (NVIDIA's NGC vLLM "
                     "images are multi-arch); stackctl builds its own images for the host it runs on", key=key),
                 **platforms)


_PULLED = re.compile(r"(?:pull access denied for|manifest for|failed to resolve reference \"?)\s*(?P<image>[^\s,\"]+)")


_UNAUTHENTICATED = re.compile(r"\bunauthorized\b", re.IGNORECASE)


def _image_pull_denied(evidence: Evidence) -> Diagnosis:
    # The refusal's own line, else the image a line beside it names ("unauthorized" follows the pull line).
    image = (evidence.read(_PULLED).get("image") or next(iter(evidence.all_found(_PULLED, "image")), "")).rstrip(":")
    key = images_key(evidence)
    login = registry_login([image])
    check = (f"check the image name and tag (set {images_entry(key)} in stack.yaml to one that exists, or remove "
             "it for stackctl's default)")
    # A registry of its own (nvcr.io, not Docker Hub, which says "unauthorized" for a name that does not
    # exist too) that asked for credentials: the login it lacks comes first.
    registry = image.split("/", 1)[0] if "/" in image else ""
    unauthenticated = "." in registry and _UNAUTHENTICATED.search(" ".join(evidence.lines))
    text = (f"log in first: {login}; then, if it still refuses, {check}" if unauthenticated
            else f"{check}; a private registry needs {login} first")
    # An existing repository without the `latest` tag a pull without one asks for (image_tags).
    untagged = latest_missing(evidence.text)
    if untagged and not unauthenticated:
        return found(evidence, Cause.image_pull_denied,
                     f"Docker cannot pull {untagged}:latest: the repository has no `latest` tag",
                     Fix(no_latest_fix(untagged, key, registry_login([untagged])), key=key),
                     image=untagged, tag="latest")
    return found(evidence, Cause.image_pull_denied,
                 f"Docker cannot pull {image or 'the image'}: no such repository or tag, or it needs a login",
                 Fix(text, key=key),
                 **({"image": image} if image else {}))


def _docker_permission(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.docker_permission,
                 "this user may not use Docker's socket (/var/run/docker.sock)",
                 Fix("add yourself to the docker group (`sudo usermod -aG docker $USER`) and log in again, or run "
                     "`stackctl up` with sudo; or run the stack without Docker: runtime: native in stack.yaml",
                     key="runtime"))


def _docker_not_running(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.docker_not_running, "no Docker engine answers on its socket",
                 Fix("start Docker (`sudo systemctl enable --now docker`; `sudo journalctl -u docker` says why it "
                     "stopped), or point DOCKER_HOST at the engine; or set runtime: native in stack.yaml",
                     key="runtime"))


def _docker_disk_full(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.docker_disk_full,
                 f"Docker ran out of disk {writing_what(evidence.line)} (its data root, /var/lib/docker by default)",
                 Fix(docker_disk_fix()))


# Docker 28 builds its bridge rules on ipsets: the kernel needs ip_set, ip_set_hash_net and xt_set
# (netfilter_xt_set), which custom and board kernels (Jetson L4T, some ARM boards) often lack.
_IPSET_MODULES = ("ip_set", "ip_set_hash_net", "xt_set")
_NAMED_MODULES = re.compile(r"Module (?P<module>\w+) not found|kernel modules (?P<required>[\w, ]+?) are required")


def _modules_named(evidence: Evidence) -> list[str]:
    named = evidence.all_found(_NAMED_MODULES, "module")
    for listed in evidence.all_found(_NAMED_MODULES, "required"):
        named += [part.strip() for part in re.split(r",|\band\b", listed) if part.strip()]
    # The iptables extension `set` and a bare EINVAL creating the bridge are Docker 28's ipsets.
    modules = [module.replace("netfilter_xt_set", "xt_set") for module in named] or list(_IPSET_MODULES)
    return list(dict.fromkeys(modules))


def _docker_kernel_module_missing(evidence: Evidence) -> Diagnosis:
    if any(TABLE_MISSING.search(line) for line in evidence.lines):
        return docker_iptables_table_missing(evidence)
    modules = _modules_named(evidence)
    ipsets = set(modules) & set(_IPSET_MODULES)
    docker_28 = (" Docker 28 needs them for its bridge; on a kernel that cannot have them (a board vendor's kernel), "
                 "stay on Docker 27.5.1 until it does. Docker's `--iptables=false` also starts, but leaves the "
                 "containers' networking to you") if ipsets else ""
    config = "CONFIG_IP_SET, CONFIG_IP_SET_HASH_NET and CONFIG_NETFILTER_XT_SET" if ipsets else "the module"
    return found(evidence, Cause.docker_kernel_module_missing,
                 f"Docker cannot set up its bridge network: the kernel lacks the module{'s' if len(modules) > 1 else ''} "
                 f"{', '.join(modules)}, so the daemon does not start",
                 Fix(f"load the kernel module{'s' if len(modules) > 1 else ''} (`sudo modprobe {' '.join(modules)}`), "
                     f"keep {'them' if len(modules) > 1 else 'it'} loaded at boot (list {'them' if len(modules) > 1 else 'it'} "
                     "in /etc/modules-load.d/docker.conf), then `sudo systemctl restart docker` and `stackctl up`; "
                     "`modprobe` saying \"not found\" means the running kernel was built without "
                     f"{'them' if len(modules) > 1 else 'it'} (use a distribution kernel, or one built with "
                     f"{config}).{docker_28}"),
                 modules=", ".join(modules))


def _mount_propagation(evidence: Evidence) -> Diagnosis:
    path = evidence.read(re.compile(r"path (?P<path>/\S*) is mounted on")).get("path", "/")
    return found(evidence, Cause.mount_propagation,
                 f"{path} is a private mount, so Docker refuses node-exporter's `{path}:/host:ro,rslave` bind",
                 Fix(f"`sudo mount --make-rshared {path}` (systemd does this at boot; a container or chroot host may "
                     "not), or set services.monitoring: false in stack.yaml", key="services.monitoring"), path=path)


def _image_pull_rate_limit(evidence: Evidence) -> Diagnosis:
    key = images_key(evidence)
    return found(evidence, Cause.image_pull_rate_limit,
                 "Docker Hub refused the pull: this address reached its pull rate limit (anonymous pulls are counted "
                 "per IP address for six hours)",
                 Fix("`docker login` with a Docker Hub account (its pulls count against a higher limit), wait for the "
                     f"six-hour window to pass, or set {images_entry(key)} in stack.yaml to the same image in a registry "
                     "mirror you run; then `stackctl up`", key=key))


def _compose_too_old(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.compose_too_old,
                 "this docker-compose is older than the Compose file format stackctl renders: GPU reservations "
                 "(`deploy.resources.reservations.devices`) need Compose 1.28 or newer",
                 Fix("use Compose v2, the `docker compose` plugin (`sudo apt install docker-compose-plugin`, or Docker's "
                     "own packages), not the old Python docker-compose 1.x (GPU reservations need 1.28 or newer); `docker compose version` must say v2, "
                     "which is what stackctl calls; then `stackctl up`"))


def _cgroup_devices_missing(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.cgroup_devices_missing,
                 "the NVIDIA container runtime looks for the cgroup v1 devices controller, which a cgroup v2 host "
                 "does not have: its libnvidia-container is too old for this kernel's cgroup setup",
                 Fix("upgrade the NVIDIA Container Toolkit (libnvidia-container 1.8 or newer supports cgroup v2: `sudo "
                     "apt install --only-upgrade nvidia-container-toolkit`), then `sudo systemctl restart docker`; or "
                     "use CDI (`sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`). Booting with "
                     "`systemd.unified_cgroup_hierarchy=0` (cgroup v1) is the old workaround. `stackctl doctor` does not "
                     "check the toolkit's version: `nvidia-container-cli --version` shows libnvidia-container's"))


_DEVICE = re.compile(r"device error: (?P<device>[^:]+): unknown device")


def _no_gpu_device(evidence: Evidence) -> Diagnosis:
    device = evidence.read(_DEVICE).get("device", "").strip()
    return found(evidence, Cause.no_gpu_device,
                 f"the container asked the NVIDIA runtime for GPU {device or '(not named)'}, which this host does not "
                 "have (GPU indexes count from 0; `nvidia-smi -L` lists them)",
                 Fix("ask for GPUs the host has: stackctl's fragment asks for all of them (`gpus: all`); a device "
                     "index or UUID set by hand (Compose `device_ids`, `--gpus device=N`, NVIDIA_VISIBLE_DEVICES or "
                     "CUDA_VISIBLE_DEVICES under vllm.environment) must be one `nvidia-smi -L` lists, and a GPU count "
                     "no larger than the number of GPUs; then `stackctl up`", env="NVIDIA_VISIBLE_DEVICES"),
                 **({"device": device} if device else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.container_cuda_requirement, r"requirement error: unsatisfied condition: cuda",
              _container_cuda_requirement),
    signature(Cause.no_gpu_runtime,
              r"could not select device driver (?:\"[\w]*\" )?with capabilities: \[|unresolvable CDI devices",
              _no_gpu_runtime),
    # A runtime named by hand that the daemon lacks: not the toolkit missing, which --gpus would say.
    signature(Cause.nvidia_runtime_unregistered,
              r"unknown or invalid runtime name: nvidia|Unknown runtime specified nvidia", _nvidia_runtime_unregistered),
    signature(Cause.gpu_driver_not_loaded,
              r"nvml error: driver not loaded|load library failed: libnvidia-ml\.so|error gathering device information "
              r"while adding custom device \"/dev/nvidia|NVIDIA-SMI has failed because it couldn't communicate with the "
              r"NVIDIA driver", _gpu_driver_not_loaded),
    # nvidia-smi's and NVML's words, and the kernel's (dmesg, journalctl) for the same mismatch.
    signature(Cause.driver_library_mismatch,
              r"Driver/library version mismatch|NVML/RM version mismatch|NVRM: API mismatch: the client",
              _driver_library_mismatch),
    signature(Cause.driver_library_mismatch, r"initialization error: cuda error: unknown error", _runtime_cuda_unknown),
    signature(Cause.wrong_architecture, r"exec format error|does not match the detected host platform",
              _wrong_architecture),
    signature(Cause.image_pull_denied,
              r"pull access denied for|manifest unknown|manifest for \S+ not found|unauthorized: authentication "
              r"required", _image_pull_denied),
    signature(Cause.docker_permission, r"permission denied while trying to connect to the Docker daemon socket",
              _docker_permission),
    signature(Cause.docker_not_running,
              r"Cannot connect to the Docker daemon at|Couldn't connect to Docker daemon|Is the docker daemon running",
              _docker_not_running),
    signature(Cause.docker_disk_full, r"failed to register layer.*no space left on device|write /var/lib/docker/\S+: "
              r"no space left|ApplyLayer exit status 1.*no space left|" + TAR_FILE_FULL.pattern, _docker_disk_full),
    signature(Cause.docker_kernel_module_missing,
              r"failed to register \"bridge\" driver: (?:.*(?:missing kernel module|modprobe: FATAL: Module \w+ not "
              r"found|kernel modules .* are required)|invalid argument\s*$)", _docker_kernel_module_missing),
    signature(Cause.mount_propagation, r"is mounted on /?\S* ?but it is not a (?:shared|shared or slave) mount",
              _mount_propagation),
    signature(Cause.gpu_access_lost, r"Failed to initialize NVML: Unknown Error", _gpu_access_lost),
    signature(Cause.nvml_insufficient_permissions, r"Failed to initialize NVML: Insufficient Permissions",
              _nvml_insufficient_permissions),
    # Inside a container, no NVML and no nvidia-smi: the NVIDIA runtime did not hand it the GPU. A
    # driver/library mismatch says so on the same line and wins (its own signature, earlier).
    signature(Cause.no_gpu_runtime,
              r"Cannot init NVML library|Failed to initialize NVML(?!: (?:Unknown Error|Driver/library|Insufficient Permissions))"
              r"|nvidia-smi:? (?:command )?not found"
              # The NGC and nvidia/cuda images' banner when started without the NVIDIA runtime.
              r"|The NVIDIA Driver was not detected\.\s+GPU functionality will not be available"
              # The exporters' words (gonvml's, and nvidia-smi's inside nvidia_gpu_exporter).
              r"|could not load NVML library|NVIDIA-SMI couldn't find libnvidia-ml\.so"
              # nvidia-smi's exit code 12 (NVML_ERROR_LIBRARY_NOT_FOUND) as nvidia_gpu_exporter reports it bare.
              r"|command failed\. .*exit status 12\b",
              _container_without_gpu, CONSEQUENCE),
    # A refused container behind an nvidia-container-cli error names its cause on the same line.
    signature(Cause.no_gpu_runtime, r"could not select device driver \"cdi\"", _no_gpu_runtime, CONSEQUENCE),
    signature(Cause.image_pull_rate_limit, r"toomanyrequests: |You have reached your (?:unauthenticated )?pull rate "
              r"limit", _image_pull_rate_limit),
    signature(Cause.compose_too_old,
              r"Additional propert(?:ies are|y \w+ is) not allowed \('?devices'? was unexpected\)"
              r"|reservations value Additional properties are not allowed", _compose_too_old),
    signature(Cause.cgroup_devices_missing, r"cgroup subsystem devices not found", _cgroup_devices_missing),
    signature(Cause.no_gpu_device, r"nvidia-container-cli: device error: [^:]+: unknown device", _no_gpu_device),
)
