"""Docker: engine reachable, Compose v2 present, and a way to give containers the GPU."""

from __future__ import annotations

from stackctl.doctor.context import DoctorContext
from stackctl.doctor.result import CheckResult, fail, ok


def check_docker(ctx: DoctorContext) -> list[CheckResult]:
    names = ("docker", "compose", "nvidia-runtime")
    if not ctx.runtime.needs_docker:
        return [ok(name, f"not used (runtime: {ctx.runtime.name})") for name in names]
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
    wanting = gpu_services(ctx)
    asks = f"{', '.join(wanting)} ask{'s' if len(wanting) == 1 else ''} Docker for GPUs (`gpus: all`)"
    if not wanting:
        results.append(ok("nvidia-runtime", f"not needed (no service asks for a GPU; hardware: {ctx.config.hardware})"))
    elif "nvidia" in docker.runtimes:
        results.append(ok("nvidia-runtime", f"runtimes: {', '.join(docker.runtimes)}"))
    elif docker.cdi_devices:
        results.append(ok("nvidia-runtime", f"CDI spec {', '.join(docker.cdi_devices)}"))
    elif not docker.reachable:
        results.append(fail("nvidia-runtime", f"{asks}; not checked: no Docker engine (and no CDI spec in /etc/cdi)",
                            "fix the docker check first; then install nvidia-container-toolkit and "
                            "`sudo nvidia-ctk runtime configure --runtime=docker`"))
    else:
        seen = f"runtimes: {', '.join(docker.runtimes)}" if docker.runtimes else "no Docker runtimes listed"
        results.append(fail("nvidia-runtime", f"{asks}, but {seen}: no NVIDIA runtime or CDI spec, so they cannot start",
                            "install nvidia-container-toolkit, then `sudo nvidia-ctk runtime configure --runtime=docker` "
                            "and `sudo systemctl restart docker`; on a machine without an NVIDIA GPU, set "
                            "`hardware: cpu` and `model: tiny` (the CPU stack needs no GPU)"))
    return results


def check_mount_propagation(ctx: DoctorContext) -> CheckResult:
    """A bind mount with `rslave`/`rshared` propagation (node-exporter's view of /) needs a
    shared host mount; Docker refuses to create the container otherwise."""
    name = "mount-propagation"
    if not ctx.runtime.needs_docker:
        return ok(name, f"not used (runtime: {ctx.runtime.name})")
    wanting = [(service, source) for service, source in _propagating_binds(ctx)]
    if not wanting:
        return ok(name, "no bind mount asks for mount propagation")
    mounts = ctx.facts.read_text("/proc/self/mountinfo") or ""
    private = [(service, source) for service, source in wanting if _propagation(mounts, source) == "private"]
    if not private:
        return ok(name, f"{', '.join(sorted({source for _, source in wanting}))} is a shared mount")
    service, source = private[0]
    return fail(name, f"{source} is a private mount, so Docker refuses {service}'s `{source}:...:rslave` bind "
                      "(\"not a shared or slave mount\")",
                f"`sudo mount --make-rshared {source}` (systemd does this at boot; a container or chroot host may "
                "not), or set services.monitoring: false")


def _propagating_binds(ctx: DoctorContext) -> list[tuple[str, str]]:
    binds = []
    for name, service in ctx.services.items():
        for volume in service.compose.get("volumes") or []:
            parts = str(volume).split(":")
            if len(parts) == 3 and parts[0].startswith("/") and any(
                    option in ("rslave", "rshared", "slave", "shared") for option in parts[2].split(",")):
                binds.append((name, parts[0]))
    return binds


def _propagation(mountinfo: str, path: str) -> str:
    """`shared`, `slave` or `private` for the mount at `path` (mountinfo's optional fields)."""
    found = "unknown"
    for line in mountinfo.splitlines():
        fields = line.split()
        if len(fields) > 6 and fields[4] == path:
            optional = fields[6:fields.index("-")] if "-" in fields else []
            found = ("shared" if any(tag.startswith("shared:") for tag in optional)
                     else "slave" if any(tag.startswith("master:") for tag in optional) else "private")
    return found


def gpu_services(ctx: DoctorContext) -> list[str]:
    """The rendered services that ask Docker for a GPU (`gpus:` or a device reservation)."""
    names = []
    for name, service in ctx.services.items():
        devices = (((service.compose.get("deploy") or {}).get("resources") or {}).get("reservations") or {}).get("devices")
        if service.compose.get("gpus") or devices:
            names.append(name)
    return sorted(names)


def _major(version: str) -> int:
    for token in version.replace("v", " ").split():
        head = token.split(".")[0]
        if head.isdigit() and "." in token:
            return int(head)
    return 0
