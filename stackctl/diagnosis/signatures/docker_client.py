"""Docker refusing its caller, and an image starting the wrong program: a client that speaks an API
version older than the daemon's minimum (Docker 29 raised it to 1.44), and an image whose ENTRYPOINT
already starts vLLM getting a command that starts it again (or starts another program through it)."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix

_API_VERSIONS = re.compile(r"client version (?P<client>[\d.]+) is too old\. Minimum supported API version is "
                           r"(?P<minimum>[\d.]+)")


def _docker_client_too_old(evidence: Evidence) -> Diagnosis:
    """The daemon refuses every call of a client (the docker CLI, the Compose plugin, a tool's Docker
    SDK or the docker CLI inside an image) that asks for an API older than its minimum."""
    said = evidence.read(_API_VERSIONS)
    client, minimum = said.get("client", "?"), said.get("minimum", "1.44")
    return found(evidence, Cause.docker_client_too_old,
                 f"the Docker daemon refuses a client that speaks API {client}: its minimum is {minimum} (Docker 29 "
                 "raised it to 1.44), so the client's every call fails",
                 Fix(f"upgrade the client to a newer docker client that speaks API {minimum}: stackctl drives the "
                     "docker CLI and its Compose plugin (`docker version` shows both sides; update docker-ce-cli and "
                     "docker-compose-plugin with the engine), and a tool that bundles its own client (a Docker SDK, a "
                     "container that runs `docker`) needs a newer version of that tool or image; a client that pins "
                     f"its version reads DOCKER_API_VERSION={minimum} from its environment. Until every client is "
                     "upgraded, the daemon accepts older ones with DOCKER_MIN_API_VERSION=1.24 in dockerd's "
                     "environment (a systemd drop-in, then `sudo systemctl restart docker`), or roll back the docker "
                     "engine to 28.x", env="DOCKER_API_VERSION", value=minimum), client=client, minimum=minimum)


# What ran: the image's ENTRYPOINT `vllm serve` followed by a command that starts a program itself.
_DOUBLED = re.compile(r"\"(?P<argv>vllm serve (?:vllm|serve|python3?|tail|bash|sh|/bin/\S+)\b[^\"]*)\""
                      # (a model path or a shell after the api_server module is arguments.py's refused positional)
                      r"|(?:vllm|vllm serve): error: unrecognized arguments: (?P<rest>(?:vllm )?serve \S+)")


def _image_entrypoint_doubled(evidence: Evidence) -> Diagnosis:
    said = evidence.read(_DOUBLED)
    shown = said.get("argv") or said.get("rest", "")
    return found(evidence, Cause.image_entrypoint_doubled,
                 "the image's ENTRYPOINT already starts vLLM (`vllm serve`, or the api_server module) and the "
                 f"container's command starts a program again in front of its arguments ({shown.rstrip(' …')} ...), "
                 "so vLLM reads that program's name as its model or refuses it",
                 Fix("pass only the model and flags as the command of an image whose entrypoint is `vllm serve` "
                     "(vllm/vllm-openai and its ROCm/CPU builds), or override the entrypoint (`--entrypoint` in "
                     "`docker run`, `entrypoint:` in Compose) when the command is a whole `vllm serve ...` or a "
                     "shell. stackctl renders the entrypoint for the image named in images.vllm (`stackctl doctor`'s "
                     "vllm-entrypoint check shows what would run): a compose file or `docker run` written by hand "
                     "must do the same", key="images.vllm"), **({"argv": shown} if shown else {}))


SIGNATURES: tuple[Signature, ...] = (
    # The daemon's answer (the CLI's "Error response from daemon", an SDK's 400 Client Error).
    signature(Cause.docker_client_too_old, r"client version [\d.]+ is too old\. Minimum supported API version is",
              _docker_client_too_old),
    # `docker ps` showing the joined command, and vLLM's parser refusing the second program's words.
    signature(Cause.image_entrypoint_doubled, _DOUBLED.pattern, _image_entrypoint_doubled),
)
