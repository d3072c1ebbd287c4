"""Images ready before anything starts: build what stackctl builds, pull the rest, once each.

A missing image found half-way through `up` would leave the stack half-started; here every
image is checked first, and one that cannot be had stops `up` with one line naming it.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable

from python_on_whales import DockerClient
from python_on_whales.exceptions import DockerException

from stackctl.errors import StackError
from stackctl.runtime.base import ServiceEvent
from stackctl.runtime.docker_output import error_line
from stackctl.services import Service

# Output of a failed build or pull that means "the registry is out of reach".
_NO_REGISTRY = re.compile(
    r"no such host|failed to resolve source metadata|failed to do request|pull access denied|"
    r"connection refused|i/o timeout|TLS handshake timeout|Temporary failure in name resolution",
    re.IGNORECASE,
)


class ImageUnavailable(StackError):
    """An image could be neither found locally, built nor pulled."""


def ensure_images(docker: DockerClient, services: list[Service],
                  on_event: Callable[[ServiceEvent], None]) -> list[str]:
    """Every service's image present locally: built (services with `build:`) or pulled; returns
    the images that were not here before."""
    seen: set[str] = set()
    arrived: list[str] = []
    for service in services:
        image = service.compose.get("image")
        if not image or image in seen:
            continue
        seen.add(image)
        try:
            present = docker.image.exists(image)
        except DockerException:
            present = False
        if present:
            continue
        if service.compose.get("build"):
            _build(docker, service, image, on_event)
        else:
            _pull(docker, service, image, on_event)
        arrived.append(image)
        on_event(ServiceEvent(service, "image-ready", detail=image))
    return arrived


def _build(docker: DockerClient, service: Service, image: str, on_event: Callable[[ServiceEvent], None]) -> None:
    on_event(ServiceEvent(service, "building", detail=image))
    tail: deque[str] = deque(maxlen=20)
    try:
        for _source, raw in docker.compose.build([service.name], progress="plain", stream_logs=True):
            line = raw.decode(errors="replace").rstrip()
            if line:
                tail.append(line)
                on_event(ServiceEvent(service, "building", detail=line))
    except DockerException as error:
        output = "\n".join([*tail, (error.stderr or "").strip()])
        reason = error_line(output)
        advice = (
            "the build needs the base image and PyPI: on a host without registry access, set "
            "build_args.BASE_IMAGE (a local Python 3.11 Debian image) and PIP_INDEX_URL in stack.yaml"
            if _NO_REGISTRY.search(output) else f"run `docker compose build {service.name}` in the stack directory "
            "to see the whole build"
        )
        raise ImageUnavailable(f"could not build image {image} (service {service.name}): {reason}; {advice}") from None


def _pull(docker: DockerClient, service: Service, image: str, on_event: Callable[[ServiceEvent], None]) -> None:
    on_event(ServiceEvent(service, "pulling", detail=image))
    try:
        for _source, raw in docker.compose.pull([service.name], stream_logs=True):
            line = raw.decode(errors="replace").strip()
            if line:
                on_event(ServiceEvent(service, "pulling", detail=line))
    except DockerException as error:
        reason = error_line((error.stderr or error.stdout or "").strip())
        raise ImageUnavailable(
            f"image {image} (service {service.name}) cannot be pulled: {reason}; check the name and your "
            f"registry access (`docker login`), or set images.{service.name} in stack.yaml to an image this host "
            "has (`docker images`) or can pull"
        ) from None
    try:
        present = docker.image.exists(image)
    except DockerException:
        present = False
    if not present:
        raise ImageUnavailable(f"image {image} (service {service.name}) is still missing after `docker compose pull`; "
                               f"set images.{service.name} in stack.yaml to an image this host has (`docker images`)")
