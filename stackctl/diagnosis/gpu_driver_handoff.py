"""The host's NVIDIA driver not reaching CUDA inside a container, read by their signatures and by the fallback alike.

- CUDA error 803, "system has unsupported display driver / cuda driver combination" (cudaErrorSystemDriverMismatch):
  the libcuda.so.1 CUDA loaded does not belong to the kernel module that runs. In a container, most often the
  image's CUDA forward-compatibility libraries (/usr/local/cuda/compat, put on the loader's path by ld.so.conf.d/
  or LD_LIBRARY_PATH) shadow the host driver's copy the NVIDIA runtime mounted: vLLM images from 0.15 on configure
  them in ld.so.conf, and under `runtime: nvidia` or a CDI device the runtime's ldcache update lets them win
  (gpustack#4678; vllm#33447, llm-d#706; vllm#34226 and #33992 ordered them last and added
  VLLM_ENABLE_CUDA_COMPATIBILITY). Forward compatibility works only on data-center GPUs with a driver of an older
  branch; a GeForce or workstation GPU gets 803 (or 804) from it. On a host, the same error is the driver's user
  libraries of one version and the loaded module of another (an upgrade without a reboot), or a driver too old for
  the CUDA of the program (easydiffusion#379: a newer driver).
- "nvidia-container-cli: initialization error: driver rpc error: timed out" (older toolkits: "driver error: timed
  out"): the runtime's query of the driver took too long, nearly always because the GPUs are not in persistence
  mode, so the driver initialises them for every client, slowly on large or many GPUs and on cloud VMs
  (nvidia-container-toolkit#202, nvidia-docker#723, #1133, #1648; #644 where nvidia-persistenced was not running).

stackctl's vLLM service asks for the GPU with `gpus: all` (Docker's --gpus), not with `runtime: nvidia`.
"""

from __future__ import annotations

import re

DRIVER_COMBINATION = re.compile(r"unsupported display driver\s*/\s*cuda driver combination|\bError 803\b"
                                r"|cudaErrorSystemDriverMismatch|CUDA_ERROR_SYSTEM_DRIVER_MISMATCH|\(803 vs\. 0\)",
                                re.IGNORECASE)
RPC_TIMEOUT = re.compile(r"nvidia-container-cli: initialization error: driver (?:rpc )?error: timed out")


def driver_combination(text: str) -> bool:
    return DRIVER_COMBINATION.search(text) is not None


def driver_combination_fix() -> str:
    return ("CUDA loaded a driver library (libcuda.so.1) that does not match the NVIDIA kernel module that runs (CUDA "
            "error 803). In a container this is most often the image's CUDA forward-compatibility libraries "
            "(/usr/local/cuda/compat, listed in /etc/ld.so.conf.d/ or on LD_LIBRARY_PATH) found before the host driver's "
            "copy that the NVIDIA runtime mounts: vLLM images from 0.15 on put them in ld.so.conf, and under "
            "`runtime: nvidia` or a CDI device the runtime's ldcache update lets them win; forward compatibility only "
            "works on data-center GPUs, never on GeForce or workstation GPUs. Put the host driver's libraries first "
            "with LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/local/nvidia/lib in vllm.environment (later vLLM "
            "images also turn the compat libraries off with VLLM_ENABLE_CUDA_COMPATIBILITY=0), ask for the GPU with "
            "`gpus: all` as stackctl's own Compose file does rather than `runtime: nvidia` in an override, or set "
            "images.vllm to an image whose CUDA the host driver supports without compat libraries (`nvidia-smi` shows "
            "the CUDA it supports). Check which library wins inside the container: `ldconfig -p | grep libcuda.so.1`. "
            "On the host itself (the native runtime, or every container), the driver's libraries and its loaded module "
            "differ after a driver upgrade: reboot (compare `cat /proc/driver/nvidia/version` with `nvidia-smi`), or "
            "the driver is older than the CUDA the program was built for: upgrade the driver; then `stackctl up`")


def rpc_timeout(text: str) -> bool:
    return RPC_TIMEOUT.search(text) is not None


def rpc_timeout_fix() -> str:
    return ("the NVIDIA container runtime asks the driver about the GPUs before the container starts, and the driver "
            "did not answer in time: the GPUs are not in persistence mode, so the driver sets each GPU up again for "
            "every client, which takes long on large GPUs, on many of them and on cloud VMs. Keep the driver "
            "initialised: run the persistence daemon, `sudo systemctl enable --now nvidia-persistenced` (the "
            "driver's own service; it must start as root), or turn persistence mode on with `sudo nvidia-smi -pm 1` "
            "(lost at reboot); `nvidia-smi -q | grep -i persistence` shows it, and a plain `nvidia-smi` on the host "
            "that takes many seconds shows the same slowness. Then `stackctl up`. If it persists with persistence on, "
            "update the NVIDIA Container Toolkit and check `dmesg` for the driver's own errors (Xid)")
