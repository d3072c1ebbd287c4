"""Where stack.yaml sets what a log names: the key behind a vLLM flag, where a variable, a package
or a file goes, said in the words a fix sentence uses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from stackctl.diagnosis.remedy import Remedy, RemedyKind

EXTRA_ARGS = "vllm.extra_args"
ENVIRONMENT = "vllm.environment"

# vLLM flags stack.yaml sets with a key of its own; every other flag goes in vllm.extra_args.
VLLM_FLAG_KEYS = {
    "--max-model-len": "vllm.max_model_len",
    "--max-num-seqs": "vllm.max_num_seqs",
    "--gpu-memory-utilization": "vllm.gpu_memory_utilization",
    "--model": "vllm.model_path",
    "--served-model-name": "served_model_name",
    "--port": "ports.vllm",
}
# The stack.yaml key that sets each service's (first) port, when the log names no number.
SERVICE_PORT_KEYS = {
    "vllm": "ports.vllm", "filter-proxy": "ports.proxy", "prometheus": "ports.prometheus",
    "grafana": "ports.grafana", "node-exporter": "ports.node_exporter", "gpu-exporter": "ports.gpu_exporter",
    "nginx": "ports.http", "certbot": "ports.http",
}


# Each service's program in words: a fix that names an images key says which program to upgrade.
_PROGRAMS = {"vllm": "vLLM", "prometheus": "Prometheus", "grafana": "Grafana", "nginx": "nginx", "certbot": "certbot",
             "node-exporter": "node-exporter", "gpu-exporter": "GPU exporter", "filter-proxy": "filter-proxy"}


def newer_image(service: str) -> str:
    """'a newer Prometheus (images.prometheus)': the program in words beside the key that sets its image."""
    return f"a newer {_PROGRAMS.get(service, service)} (images.{service})"


def port_key(port: int | None, service: str, port_keys: Mapping[int, str]) -> str | None:
    """The stack.yaml key of a port a log names (`port_keys`: host port -> key), else the key of
    the service's own port."""
    return (port_keys.get(port) if port else None) or SERVICE_PORT_KEYS.get(service)


def nginx_port_key(port: str) -> str:
    """Which of nginx's two ports a port number is (443: HTTPS, any other: HTTP)."""
    return "ports.https" if port == "443" else "ports.http"


# Words an image's repository carries, and the service whose images: key it goes under; the more
# specific first (prom/node-exporter is node-exporter's, not Prometheus's; nginx-certbot is certbot's).
_IMAGE_WORDS = (("node-exporter", "node-exporter"), ("node_exporter", "node-exporter"),
                ("gpu-exporter", "gpu-exporter"), ("gpu_exporter", "gpu-exporter"), ("dcgm", "gpu-exporter"),
                ("prometheus", "prometheus"), ("grafana", "grafana"), ("certbot", "certbot"), ("nginx", "nginx"),
                ("filter-proxy", "filter-proxy"), ("vllm", "vllm"))


def image_service(reference: str, images: Mapping[str, str]) -> str | None:
    """The service whose image `reference` is: the stack.yaml `images` entry of the same repository
    (any tag), else the service its repository's name says (a vLLM build -> vllm); None: neither."""
    repository = _repository(reference)
    for service, configured in images.items():
        if _repository(configured) == repository:
            return service
    return next((service for word, service in _IMAGE_WORDS if word in repository), None)


def _repository(reference: str) -> str:
    """An image reference without its tag or digest, and without Docker Hub's implied prefixes."""
    name = reference.strip().lower().split("@", 1)[0]
    if ":" in name.rsplit("/", 1)[-1]:
        name = name.rsplit(":", 1)[0]
    for implied in ("docker.io/", "index.docker.io/", "library/"):
        name = name.removeprefix(implied)
    return name


# The user each service's default image runs as (uid), where it is not root: a path it must use
# has to be theirs.
SERVICE_USERS = {"grafana": ("grafana", 472), "prometheus": ("nobody", 65534), "node-exporter": ("nobody", 65534)}
# Where each service keeps the data it reads back at start (in its container), for a fix that has to
# name a directory where the log names none.
SERVICE_DATA_DIRS = {"prometheus": "/prometheus", "grafana": "/var/lib/grafana", "certbot": "/etc/letsencrypt",
                     "supervisord": "/var/log/supervisor"}
# Services whose flags come from the engine's command line that stack.yaml extends.
_ENGINE_SERVICES = frozenset({"vllm", "ray-head", "ray-worker"})
# Services that relay the engine's refusals (a client's error is vLLM's): an engine setting with a
# key of its own (max_model_len) is set there.
_ENGINE_FRONTS = frozenset({"filter-proxy"})


@dataclass(frozen=True)
class Placement:
    """How to apply a remedy in stackctl: the stack.yaml key (if one sets it) and the sentence."""

    key: str | None
    text: str


def as_flag(remedy: Remedy, service: str) -> str | None:
    """The flag a remedy names for this service: a flag as written, an engine's setting as its flag
    (max_loras -> --max-loras); another service's setting is no flag."""
    if remedy.kind in (RemedyKind.flag, RemedyKind.drop_flag):
        return remedy.name
    if remedy.kind is RemedyKind.port and service in _ENGINE_SERVICES:
        return "--port"
    if remedy.kind is RemedyKind.setting and _for_engine(remedy, service):
        flag = remedy.name.replace("_", "-")
        return f"--no-{flag}" if switch(remedy.value) is False else f"--{flag}"
    return None


def _for_engine(remedy: Remedy, service: str) -> bool:
    """The remedy is set on the engine: the service is the engine, or relays its refusals and the
    remedy is an engine setting stack.yaml has a key for."""
    return service in _ENGINE_SERVICES or (
        service in _ENGINE_FRONTS and remedy.kind is RemedyKind.setting
        and "--" + remedy.name.replace("_", "-") in VLLM_FLAG_KEYS)


def switch(value: str | None) -> bool | None:
    """True/False where a setting's value is a switch ("trust_remote_code=True"), else None."""
    return {"true": True, "false": False}.get((value or "").lower())


def placement(remedy: Remedy, service: str, port_keys: Mapping[int, str] | None = None) -> Placement:
    """Where stack.yaml (or the host) applies `remedy`; `port_keys` maps a host port to its key."""
    special = _host_placement(remedy, service, port_keys or {})
    if special is not None:
        return special
    engine = _for_engine(remedy, service)
    if remedy.kind is RemedyKind.setting and engine:
        # A switch is a flag of its own (trust_remote_code=True: --trust-remote-code), with no value.
        remedy = Remedy(RemedyKind.flag, as_flag(remedy, service) or remedy.name,
                        None if switch(remedy.value) is not None else remedy.value)
    value = f" {remedy.value}" if remedy.value else ""
    if remedy.kind is RemedyKind.flag and engine:
        key = VLLM_FLAG_KEYS.get(remedy.name)
        if key:
            return Placement(key, f"set {key} in stack.yaml ({remedy.name}{value})")
        return Placement(EXTRA_ARGS, f"add {remedy.name}{value} to {EXTRA_ARGS} in stack.yaml")
    if remedy.kind is RemedyKind.drop_flag:
        if not engine:
            return Placement(None, f"take {remedy.name} off {service}'s command line, as the log asks (or, if the "
                                   f"flag is right, use {newer_image(service)} in stack.yaml, whose release knows "
                                   "it)")
        key = VLLM_FLAG_KEYS.get(remedy.name)
        return Placement(key or EXTRA_ARGS, f"remove {remedy.name} from {EXTRA_ARGS} in stack.yaml"
                         + (f" ({key} sets it)" if key else "") + ", as the log asks")
    if remedy.kind is RemedyKind.env and engine:
        setting = f"{remedy.name}: {remedy.value}" if remedy.value else f"{remedy.name}: <value>"
        return Placement(ENVIRONMENT, f"set {remedy.name} under {ENVIRONMENT} in stack.yaml ({setting})")
    if remedy.kind is RemedyKind.package and engine:
        return Placement("images.vllm", f"vLLM's engine lacks {remedy.name}: use an images.vllm that includes it "
                                        "(native runtime: install it into the engine's venv, or "
                                        "`stackctl install-engine` again)")
    if remedy.kind is RemedyKind.file:
        return Placement(_file_key(remedy.name, service), f"make {remedy.name} exist and readable where {service} "
                                                          "runs")
    if remedy.kind is RemedyKind.setting:
        setting = f"{remedy.name} to {remedy.value}" if remedy.value else remedy.name
        return Placement(None, f"change {setting} in {service}'s configuration, as the log asks (stackctl renders "
                               f"{service}'s configuration, so report it if the rendered one needs a change)")
    if remedy.kind is RemedyKind.driver:
        return Placement("images.vllm" if engine else None,
                         "update the host's NVIDIA driver (`nvidia-smi` shows its version; `stackctl doctor` compares "
                         "it with what the image's CUDA needs)"
                         + (", or use an images.vllm built for the CUDA this driver supports" if engine else ""))
    if remedy.kind is RemedyKind.stated:
        return Placement(None, f"{remedy.name}, as the log asks")
    if remedy.kind is RemedyKind.command:
        return Placement(None, f"run `{remedy.name}` {_where(service)}, as the log says")
    if remedy.kind is RemedyKind.directive:
        return Placement(None, f"the log names {service}'s `{remedy.name}` setting: stackctl renders {service}'s "
                               f"configuration, so report it if the rendered one needs a change")
    if remedy.kind is RemedyKind.env:
        return Placement(None, f"set {remedy.name}{'=' + remedy.value if remedy.value else ''} in {service}'s "
                               "environment")
    return Placement(None, f"{'add ' if remedy.kind is RemedyKind.flag else 'install '}{remedy.name}{value} "
                           f"{_where(service)}")


def _where(service: str) -> str:
    """Where a remedy is applied: the Docker client runs on this host; a service, wherever it runs."""
    return "on this host" if service in ("docker", "compose") else f"where {service} runs"


def _file_key(path: str, service: str) -> str | None:
    if "letsencrypt" in path or path.endswith((".pem", ".crt", ".key")):
        return "letsencrypt_dir"
    if "huggingface" in path or "/hub/" in path:
        return "hf_cache"
    if service in _ENGINE_SERVICES and path.endswith(("config.json", ".safetensors", "tokenizer.json")):
        return "vllm.model_path"
    return None


def _host_placement(remedy: Remedy, service: str, port_keys: Mapping[int, str]) -> Placement | None:
    """Remedies applied on the host or by a key of their own, whatever the service: a port, a path's
    owner, an execute bit, a directory in a file's place, a component to upgrade."""
    path = remedy.name
    if remedy.kind is RemedyKind.port:
        port = int(path) if path.isdigit() else None
        key = port_key(port, service, port_keys)
        which = f"port {port}" if port else f"a port {service} listens on"
        move = f" or move {key} in stack.yaml to a free port" if key else " or move it to another port"
        listens = f"ss -ltnp 'sport = :{port}'" if port else "ss -ltnp"
        return Placement(key, f"{which} is already in use by another process: stop what holds it (`{listens}` "
                              "shows who listens; often an earlier instance "
                              f"still running){move}")
    if remedy.kind in (RemedyKind.permission, RemedyKind.writable):
        user = SERVICE_USERS.get(service)
        owner = (f"{service}'s image runs as {user[0]} (uid {user[1]}): `sudo chown -R {user[1]}:{user[1]}` the host "
                 "directory mounted there" if user else
                 "the user it runs as must own it or be allowed there (`sudo chown -R` it to that user)")
        return Placement(_file_key(path, service),
                         f"give {service} {'write ' if remedy.kind is RemedyKind.writable else ''}access to {path}"
                         f"{'' if remedy.kind is RemedyKind.writable else ' (permission denied)'}: {owner}; `ls -ld {path}` shows its "
                         "owner and mode; on an SELinux host a bind mount also needs the :z option")
    if remedy.kind is RemedyKind.executable:
        return Placement(None, f"{path} is not executable: `chmod +x {path}` (and a `#!` line naming its "
                               "interpreter), or run it through its interpreter in the command")
    if remedy.kind is RemedyKind.directory_for_file:
        return Placement(_file_key(path, service),
                         f"{path} is a directory where {service} expects a file: Docker makes a directory for a bind "
                         "mount whose host file is missing; remove that directory on the host, create the file, then "
                         "`stackctl up`")
    exhausted = _exhausted_placement(remedy, service)
    if exhausted is not None:
        return exhausted
    if remedy.kind is RemedyKind.upgrade:
        version = f" (>= {remedy.value})" if remedy.value else ""
        if service in _ENGINE_SERVICES:
            return Placement("images.vllm", f"the engine's {path} is too old{version}: use {newer_image('vllm')} that "
                                            f"ships a newer {path} (native runtime: upgrade it in the engine's venv, "
                                            "or `stackctl install-engine` again)")
        if service in ("docker", "compose"):
            return Placement(None, f"upgrade the {path}{version}: a newer docker client (the docker CLI, its Compose "
                                   "plugin, or the SDK or image that carries one) than the daemon refuses")
        return Placement(f"images.{service}", f"upgrade {path}{version}: {newer_image(service)} in stack.yaml")
    return None


def _exhausted_placement(remedy: Remedy, service: str) -> Placement | None:
    """A resource the log says ran out, said for the service that ran out of it: the disk, a server's
    rate limit, a lock another process holds, a data file left empty or cut short."""
    path = remedy.value or ""
    data = SERVICE_DATA_DIRS.get(service)
    if remedy.kind is RemedyKind.disk_full:
        if service in ("docker", "compose"):
            # The path is inside the image being unpacked: the disk is the one under Docker's data-root.
            return Placement(None, "the disk is full (no space left on device): Docker unpacks images and keeps "
                                   "layers under its data-root (/var/lib/docker; `docker system df` shows what it "
                                   "holds, `df -h /var/lib/docker` the free space): free space there with `docker "
                                   "system prune`, which removes what no container uses, or move data-root to a "
                                   "larger disk in /etc/docker/daemon.json")
        where = path or data or ""
        text = (f"the disk is full (no space left on device{' writing ' + path if path else ''}): free space on the "
                f"filesystem that holds {where or 'what ' + service + ' writes'} (`df -h{' ' + where if where else ''}` "
                "shows it)")
        if service in _ENGINE_SERVICES:
            return Placement("hf_cache", text + "; the weights go where hf_cache points: free space there or set "
                                                "hf_cache in stack.yaml to a larger disk")
        return Placement(None, text)
    if remedy.kind is RemedyKind.rate_limited:
        when = f" (the log says: retry after {path})" if path else ""
        text = (f"a rate limit of the server {service} calls was reached: wait until it resets{when} rather than "
                "retrying at once, and stop whatever retries in a loop")
        if service in ("docker", "compose"):
            return Placement(None, text + "; Docker Hub counts anonymous pulls per address: `docker login` raises "
                                          "the limit")
        if service == "certbot":
            return Placement("letsencrypt_dir", text + "; how long depends on the limit the error names (an hour "
                                                       "for failed validations, 3 hours for new orders or accounts, "
                                                       "a week for certificates of the same names): keep "
                                                       "letsencrypt_dir across restarts so certbot reuses the "
                                                       "certificate it has, and try changes with --staging")
        return Placement(None, text)
    if remedy.kind is RemedyKind.lock_held:
        where = path or data or f"{service}'s data directory"
        return Placement(None, f"another process holds the lock on {where}: most often another {service} using the "
                               "same directory (`stackctl status`; an older stack or a system service): stop it; a "
                               "filesystem without POSIX locks (NFS, some network shares) refuses the lock: keep the "
                               "data on a local disk")
    if remedy.kind is RemedyKind.data_truncated and remedy.name == "JSON file" and service == "prometheus":
        # Prometheus reads one JSON file at start per block: its meta.json (TSDB blocks: DATA/<ULID>/meta.json).
        block = path.removesuffix("/meta.json") if path.endswith("/meta.json") else ""
        which = (f"the block {block} (its meta.json)" if block else
                 f"a block directory under {data} whose meta.json is empty (`find {data} -name meta.json -size 0` "
                 "finds it)")
        return Placement(None, f"a block's meta.json that prometheus reads at start is empty or cut short, most often "
                               f"after the disk filled or a crash: move {which} out of the data directory (Prometheus "
                               "starts without that block's samples; keep it to restore) and free disk space (`df -h`)")
    if remedy.kind is RemedyKind.data_truncated:
        directory = path.rsplit("/", 1)[0] if path.count("/") > 1 else (data or "")
        find = f" (`find {directory} -size 0` lists empty files)" if directory else ""
        return Placement(None, f"a file {service} reads at start{' (' + path + ')' if path else ''} is empty or cut "
                               "short, most often after the disk filled or a crash: move it out of the way (or "
                               f"restore it from a backup){find} and free disk space (`df -h`)")
    return None
