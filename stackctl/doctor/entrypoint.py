"""How the vLLM service starts: its image's ENTRYPOINT (read with `docker image inspect` when the
image is here) joined with the rendered entrypoint and command must start vLLM's server once.

`vllm serve python3 -m vllm.entrypoints.openai.api_server ...` (vllm/vllm-openai's ENTRYPOINT in
front of a whole command) dies with "unrecognized arguments"; this check catches any such pair
before `up`.
"""

from __future__ import annotations

import json

from stackctl.doctor.context import DoctorContext
from stackctl.doctor.result import CheckResult, fail, ok, warn
from stackctl.engine.invocation import ImageStart, image_invocation

NAME = "vllm-entrypoint"
_SERVER = ("serve", "vllm.entrypoints.openai.api_server", "vllm.entrypoints.cli.main")


def check_vllm_entrypoint(ctx: DoctorContext) -> CheckResult:
    service = ctx.services["vllm"]
    if not ctx.runtime.needs_docker:
        argv = list(service.native.argv) if service.native else []
        return ok(NAME, f"natively: {_shown(argv)}")
    image = str(service.compose.get("image", ""))
    inspected = _image_start(ctx, image)
    rendered_entrypoint = service.compose.get("entrypoint")
    command = [str(word) for word in service.compose.get("command") or []]
    invocation = image_invocation(image, inspected, cpu_build=not ctx.config.hardware_profile.has_gpu)
    if rendered_entrypoint is not None:
        entrypoint = [str(word) for word in rendered_entrypoint]
    elif inspected is not None:
        entrypoint = list(inspected.entrypoint)
    else:
        return ok(NAME, f"{image}: {invocation.reason}; it runs {_shown(command)}")
    argv = [*entrypoint, *command]
    starts = sum(word in _SERVER for word in argv[:len(entrypoint) + 4])
    if starts != 1:
        return fail(NAME, f"{image} would run {_shown(argv)}: vLLM's server is named {starts} times, so it "
                          "stops with \"unrecognized arguments\"",
                    _fix(image, entrypoint))
    found = f"{image}: {invocation.reason}; it runs {_shown(argv)}"
    if rendered_entrypoint is not None and inspected is None:
        return warn(NAME, found, f"`docker pull {image}`: once it is here, stackctl reads its ENTRYPOINT")
    return ok(NAME, found)


def _image_start(ctx: DoctorContext, image: str) -> ImageStart | None:
    output = ctx.facts.run(["docker", "image", "inspect", image])
    if output is None or output.returncode != 0:
        return None
    try:
        details = json.loads(output.stdout)[0]
        config = details.get("Config") or {}
    except (ValueError, IndexError, KeyError, AttributeError):
        return None
    return ImageStart(tuple(config.get("Entrypoint") or ()), dict(config.get("Labels") or {}))


def _fix(image: str, entrypoint: list[str]) -> str:
    return (f"run `stackctl render` again (it reads {image}'s ENTRYPOINT {entrypoint} once the image is here); if "
            "the image's entrypoint is a script that starts vLLM its own way, use an image whose entrypoint is "
            "`vllm serve`, or none (images.vllm)")


def _shown(argv: list[str], words: int = 6) -> str:
    head = " ".join(argv[:words])
    return f"`{head}{' ...' if len(argv) > words else ''}`"
