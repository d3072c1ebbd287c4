"""A failure signature: the line that betrays it, how much it says, and how to read the fix from it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.stack_keys import image_service
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity

# When several lines of one start match, the heaviest wins (the latest among equals):
# the root cause a message names beats the symptom it leads to, which beats a mere warning.
ROOT_CAUSE = 30
# An out-of-memory error: its phase (graph capture, loading, profiling) is read from the
# traceback, and a message that names its own cause (KV cache, Mamba blocks) still beats it.
OUT_OF_MEMORY = 25
# A consequence that usually has a root cause logged next to it (no GPU, an NCCL system error).
CONSEQUENCE = 20
# A warning the engine survives; reported only when nothing fatal is found.
ADVISORY = 5

Builder = Callable[[Evidence], Diagnosis]


@dataclass(frozen=True)
class Signature:
    # The cause this signature usually yields (a builder may refine it, e.g. by OOM phase).
    cause: Cause
    trigger: re.Pattern[str]
    build: Builder
    weight: int = ROOT_CAUSE


def signature(cause: Cause, trigger: str, build: Builder, weight: int = ROOT_CAUSE) -> Signature:
    return Signature(cause, re.compile(trigger, re.IGNORECASE), build, weight)


def unnamed(*patterns: re.Pattern[str]) -> str:
    """One trigger from patterns that read values: their named groups made plain, since every trigger is
    compiled into one pattern, where two groups of one name cannot meet."""
    return "|".join(re.sub(r"\(\?P<\w+>", "(?:", pattern.pattern) for pattern in patterns)


# Where a log names the image it is about: Docker's refusals, and the commands pasted with them.
_IMAGE_NAMED = re.compile(
    r"(?:pull access denied for|manifest for|failed to resolve reference|Unable to find image|No such image:"
    r"|docker (?:image )?(?:pull|inspect)(?: --?[\w-]+(?:[= ][^\s-]\S*)?)*?|Pulling from)\s+[\"']?"
    r"(?P<image>\w[\w.-]*(?:/[\w.-]+)*(?::[\w.-]+)?)")
# Logs that are no one service's own: Docker's, Compose's, supervisord's.
_NOT_A_SERVICE = frozenset({"docker", "compose", "supervisord"})


def images_key(evidence: Evidence, default: str | None = None) -> str | None:
    """The `images:` key of the image a failure is about: the image the log names (stack.yaml's
    entry of that image, else the service its name says), else the service whose log it is, else
    `default`, else the only image stack.yaml sets; None where nothing says which."""
    context = evidence.context
    for image in evidence.all_found(_IMAGE_NAMED, "image"):
        service = image_service(image, context.images)
        if service:
            return f"images.{service}"
    if context.service not in _NOT_A_SERVICE:
        return f"images.{context.service}"
    if default:
        return default
    return f"images.{next(iter(context.images))}" if len(context.images) == 1 else None


def registry_login(images: list[str]) -> str:
    """How to log in to the registry the first of `images` lives on: a registry is the first part of a
    name where it has a dot or a port (nvcr.io/...); else Docker Hub. NGC's nvcr.io takes the literal user
    name $oauthtoken and an NGC API key as the password."""
    registries = [image.split("/", 1)[0] for image in images if "/" in image]
    private = next((registry for registry in registries if "." in registry or ":" in registry), "")
    if private == "nvcr.io":
        return ("`docker login nvcr.io` with the user name `$oauthtoken` (as written) and an NGC API key as the password "
                "(generate one at https://org.ngc.nvidia.com/setup/api-keys; `echo \"$NGC_API_KEY\" | docker login nvcr.io "
                "-u '$oauthtoken' --password-stdin` keeps it out of the shell history)")
    return f"`docker login {private}`" if private else "`docker login`"


def images_entry(key: str | None) -> str:
    """`key` in a fix sentence, or which entry to look for where the log does not say."""
    return key or "the images entry of the service that would not start (images.vllm for the engine; " \
                  "`stackctl status` names the service)"


# What doctor's nvidia-runtime row checks (stackctl/doctor/docker.py): the runtime registered or a CDI
# spec present, not the toolkit's version, its hook or whether it finds the driver's libraries.
DOCTOR_GPU_RUNTIME = "`stackctl doctor` checks that Docker lists the nvidia runtime or that a CDI spec is in /etc/cdi"
# The GPU asked for as a CDI device, where a host has the toolkit's CDI spec but not the hook Docker's
# --gpus calls (NixOS's hardware.nvidia-container-toolkit, the toolkit's -base package): Docker serves
# `gpus: all` through CDI itself only from moby#50228 on.
CDI_REQUEST = ("On a host set up for CDI only (a CDI spec, no nvidia-container-runtime-hook: NixOS's "
               "hardware.nvidia-container-toolkit, the nvidia-container-toolkit-base package), ask for the GPU as a CDI "
               "device instead: in Compose `deploy.resources.reservations.devices` with `driver: cdi` and `device_ids: "
               "[nvidia.com/gpu=all]` (`docker run --device nvidia.com/gpu=all`; Docker 25 and later: where `docker "
               "info` lists no CDI spec directories, turn CDI on in /etc/docker/daemon.json, `\"features\": {\"cdi\": "
               "true}`), or `runtime: nvidia` with NVIDIA_VISIBLE_DEVICES=all where the nvidia runtime is registered. "
               "stackctl renders `gpus: all` and has no stack.yaml key for a CDI request: put it on the vllm and "
               "gpu-exporter services in an override file passed to `docker compose -f`; doctor's nvidia-runtime row "
               "passes on a CDI spec alone, which `gpus: all` uses only on a Docker that serves --gpus through CDI")


def found(evidence: Evidence, cause: Cause, summary: str, fix: Fix, *,
          severity: Severity = Severity.fatal, **values: str | float) -> Diagnosis:
    """The diagnosis for `evidence`: its line is the evidence shown to the user."""
    return Diagnosis(cause, summary, fix, evidence.line, severity, values)
