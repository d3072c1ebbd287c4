"""A DCGM client (dcgmi, dcgm-exporter in remote mode, a sampler) that cannot reach DCGM's host engine:
"Unable to connect to host engine. Host engine connection invalid/disconnected." (dcgmi), "Error connecting
to nv-hostengine: Host engine connection invalid/disconnected" (dcgm-exporter), "dcgmConnect() failed: Host
engine connection invalid/disconnected(-21)" (ldms's sampler).

nv-hostengine is not running: never started (the nvidia-dcgm service is installed disabled: DCGM#57, "sudo
systemctl --now enable nvidia-dcgm" solved it; ldms#1636, the sampler fails exactly when nvidia-dcgm.service
is not running), restarted under a client that stays connected to the old one, listening on 127.0.0.1 only
for a client on another host (DCGM#133: -b to bind another address), or unable to start because the host has
no NVIDIA GPU for it to manage: DCGM#43, an AWS g4ad instance (AMD Radeon GPUs) taken for a g4dn (NVIDIA T4).
stackctl's own GPU exporter (nvidia_gpu_exporter, or its own on hosts without one) uses no DCGM; a
dcgm-exporter comes from images.gpu-exporter in stack.yaml.
"""

from __future__ import annotations

import re

HOSTENGINE_UNREACHABLE = re.compile(r"Unable to connect to host engine|Host engine connection invalid/disconnected"
                                    r"|unable to establish a connection to the specified host")


def hostengine_unreachable(text: str) -> bool:
    return HOSTENGINE_UNREACHABLE.search(text) is not None


def hostengine_fix() -> str:
    return ("DCGM's client could not reach its host engine (nv-hostengine): it is not running, or it cannot run here. "
            "Check the GPU first, `nvidia-smi`: DCGM manages NVIDIA GPUs only, so on a host with no NVIDIA GPU (an AMD "
            "GPU instance such as AWS g4ad, which is not the NVIDIA T4 g4dn, or no GPU at all) there is nothing for it "
            "to connect to: use an NVIDIA GPU instance, or remove images.gpu-exporter from stack.yaml so stackctl "
            "runs its own GPU exporter, which needs no DCGM and reports a host without a GPU. With an NVIDIA GPU, "
            "start the host engine (`sudo systemctl --now enable nvidia-dcgm`, or `sudo nv-hostengine`; it listens on "
            "127.0.0.1:5555 only, `-b ADDRESS` for clients on other hosts) or let dcgm-exporter run its embedded "
            "engine (no `-r HOST:PORT`, no DCGM_REMOTE_HOSTENGINE_INFO); after nv-hostengine restarts, restart the "
            "exporter that was connected to it")
