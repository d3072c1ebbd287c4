"""Docker: engine reachable, Compose v2 present, and a way to give containers the GPU."""

from __future__ import annotations

from stackctl.doctor.context import DoctorContext
from stackctl.doctor.result import CheckResult, fail, ok


def check_docker(ctx: DoctorContext) -> list[CheckResult]:
    names = ("docker", "compose", "nvidia-runtime")
    if ctx.runtime != "compose":
        return [ok(name, f"not used (runtime: {ctx.runtime})") for name in names]
    docker = ctx.facts.docker()
    results = []
    if not docker.reachable:
        results.append(fail("docker", docker.error,
                            "install Docker Engine (https://docs.docker.com/engine/install/), `sudo systemctl enable --now docker`, "
                            "`sudo usermod -aG docker $USER` and log in again; or set runtime: native"))
        results.append(fail("compose", "not checked: no Docker engine", "fix the docker check first"))
    else:
        results.append(ok("docker", f"engine {docker.server_version or '?'} reachable"))
        version = docker.compose_version or ""
        if not version or _major(version) < 2:
            results.append(fail("compose", version or "`docker compose` is not installed",
                                "install Compose v2: `sudo apt install docker-compose-plugin`"))
        else:
            results.append(ok("compose", version))
    if not ctx.config.hardware_profile.has_gpu:
        results.append(ok("nvidia-runtime", f"not needed (hardware: {ctx.config.hardware})"))
    elif "nvidia" in docker.runtimes:
        results.append(ok("nvidia-runtime", f"runtimes: {', '.join(docker.runtimes)}"))
    elif docker.cdi_devices:
        results.append(ok("nvidia-runtime", f"CDI spec {', '.join(docker.cdi_devices)}"))
    elif not docker.reachable:
        results.append(fail("nvidia-runtime", "not checked: no Docker engine (and no CDI spec in /etc/cdi)",
                            "fix the docker check first; then install nvidia-container-toolkit and "
                            "`sudo nvidia-ctk runtime configure --runtime=docker`"))
    else:
        seen = f"runtimes: {', '.join(docker.runtimes)}" if docker.runtimes else "no Docker runtimes listed"
        results.append(fail("nvidia-runtime", f"{seen}; no NVIDIA runtime or CDI spec, so `gpus: all` fails",
                            "install nvidia-container-toolkit, then `sudo nvidia-ctk runtime configure --runtime=docker` "
                            "and `sudo systemctl restart docker`"))
    return results


def _major(version: str) -> int:
    for token in version.replace("v", " ").split():
        head = token.split(".")[0]
        if head.isdigit() and "." in token:
            return int(head)
    return 0
