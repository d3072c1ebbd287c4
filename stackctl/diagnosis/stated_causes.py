"""Causes an error line states in so many words, whatever program says them, for the fallback to
name the fix of where no signature knows the failure:

- two components whose versions do not match ("cannot import name 'X' from 'pkg'", "undefined
  symbol: SYMBOL" in a compiled module, "API version mismatch", the NVIDIA driver's "Driver/library version
  mismatch" and its kernel module's "NVRM: API mismatch", "module compiled against API version
  A but this version of numpy is B", pip's "X requires Y==N, but you have Y M");
- a unix socket with no server behind it ("unix:///var/run/supervisor.sock no such file", "dial unix
  /run/containerd/containerd.sock: connect: no such file or directory", "Is the docker daemon
  running?", "connect() to unix:/run/php-fpm.sock failed (111: Connection refused)"), or one that
  refuses this user ("connect: permission denied");
- an image the registry refuses ("pull access denied for IMAGE, repository does not exist",
  "manifest for IMAGE not found: manifest unknown"; a repository without the `latest` tag a pull without one
  asks for: a version tag, image_tags);
- what a service needs from the host and does not find: Docker without a GPU device driver ("could not
  select device driver "" with capabilities: [[gpu]]"), nginx's upstream name that does not resolve
  ('host not found in upstream "app"'), a Hugging Face repository that refuses without a token (401,
  GatedRepoError);
- what the services around it state (stated_services): a program built for another CPU architecture,
  nothing listening where a connection was refused, an upstream's headers past nginx's buffer;
- what a service's configuration states (stated_configs): supervisord's %(ENV_X)s unset when it started,
  nginx's temp path its worker may not write, a listen on IPv6 where the host has none, a Prometheus
  flag written into prometheus.yml;
- what vLLM states about the model (stated_engine): an architecture it does not know, no chat template,
  a template that wants roles alternating; an architecture it failed to inspect (inspection), by the
  cause its subprocess's traceback states;
- what a refused request states about the model's context window (stated_requests): a request longer
  than the window, an answer budget the window cannot hold, a client that needs a longer window;
- text a program could not encode (stated_encoding): a token with non-ASCII characters in a header, or
  output in an ASCII-only locale;
- what a failure class's shared reader knows (stated_classes): Docker's flushed iptables chains, a
  Prometheus rule file that did not load, supervisord's log file it cannot open, its program's working
  directory or exit status 127, nginx's resolver naming no address, and a script's CRLF line endings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from stackctl.diagnosis.image_tags import latest_missing, no_latest_fix
from stackctl.diagnosis.inspection import CANNOT_IMPORT, inspection_failed
from stackctl.diagnosis.signature import CDI_REQUEST, registry_login
from stackctl.diagnosis.stack_keys import image_service, newer_image
from stackctl.diagnosis.stated_cause import StatedCause
from stackctl.diagnosis.stated_classes import classes_stated
from stackctl.diagnosis.stated_configs import configs_stated
from stackctl.diagnosis.stated_encoding import encodings_stated
from stackctl.diagnosis.stated_engine import engine_stated
from stackctl.diagnosis.stated_requests import requests_stated
from stackctl.diagnosis.stated_services import services_around
from stackctl.diagnosis.verdict import DiagnosisContext

__all__ = ["StatedCause", "stated_causes"]

# Services whose engine is vLLM's: a component that does not match is the engine's environment.
_ENGINE_SERVICES = frozenset({"vllm", "ray-head", "ray-worker"})
# The Docker client's own logs (no image of their own).
_DOCKER_SERVICES = frozenset({"docker", "compose"})


def stated_causes(lines: Iterable[str], context: DiagnosisContext, traceback: Sequence[str] = (),
                  earlier: Sequence[str] = ()) -> list[StatedCause]:
    """The causes these lines (the decisive error first) state, each once, first stated first; `traceback`
    holds the decisive error's frames, where the cause depends on the code that raised it; `earlier`, the
    log up to the decisive error, where another process's traceback above it states the cause."""
    found: list[StatedCause] = []
    lines = list(lines)
    # vLLM's failed inspection may sit above its subprocess's error, the decisive one.
    inspected = next((cause for line in [*lines, *reversed(earlier)]
                      if (cause := inspection_failed(line, [*earlier, *traceback]))), None)
    if inspected:
        found.append(inspected)
    # The repository a refusal is about may be named on a line beside it.
    repository = next((match for line in lines if (match := _HUB_REPOSITORY.search(line))), None)
    for line in lines:
        for cause in (*_mismatches(line, context), *_sockets(line, context), *_refused_images(line, context),
                      *_host_lacks(line, repository), *services_around(line, context),
                      *configs_stated(line, context), *engine_stated(line), *requests_stated(line),
                      *classes_stated(line, traceback)):
            if all(known.name != cause.name for known in found):
                found.append(cause)
    # Read with the error's traceback: its frames tell a header from output.
    return found + encodings_stated([*lines, *traceback], context)


# --- two components whose versions do not match ---------------------------------------------------

# "cannot import name 'X' from 'pkg.mod' (/path/pkg/mod.py)": the installed pkg lacks what its caller
# imports. Not a package found nowhere ("(unknown location)": a directory of that name shadows it).
_CANNOT_IMPORT = re.compile(CANNOT_IMPORT.pattern + r"(?! \(unknown location\))")
# "/x/site-packages/vllm/_C.abi3.so: undefined symbol: _ZN3c10...": a compiled module built against
# another release of the library that exports the symbol.
_UNDEFINED_SYMBOL = re.compile(r"(?:(?P<library>/[^\s:'\"]+?\.so(?:\.[\d.]+)?): )?undefined symbol: (?P<symbol>\w+)")
_SITE_PACKAGE = re.compile(r"(?:site|dist)-packages/(?P<package>[\w-]+)")
# The library a C++ symbol belongs to, from its mangled namespace (_ZN3c10... is c10: PyTorch).
_SYMBOL_OWNERS = (("_ZN3c10", "torch"), ("_ZNK3c10", "torch"), ("_ZN2at", "torch"), ("_ZNK2at", "torch"),
                  ("_ZN5torch", "torch"), ("_ZNK5torch", "torch"), ("_ZN6caffe2", "torch"), ("nccl", "NCCL"),
                  ("cublas", "cuBLAS"), ("cudnn", "cuDNN"), ("cuda", "CUDA runtime"))
# The CUDA driver API (cuInit, cuTensorMapEncodeTiled): exported by the driver's libcuda.so, so a
# symbol missing there is a driver older than what the module was built for.
_DRIVER_SYMBOL = re.compile(r"^cu[A-Z]")
# "module compiled against API version 0x10 but this version of numpy is 0xe" (NumPy's C API).
_COMPILED_AGAINST = re.compile(r"compiled against (?:API )?version (?P<built>\w+) but this version of (?P<name>[\w.-]+) "
                               r"is (?P<have>\w+)")
# pip's resolver: "vllm 0.7.3 requires torch==2.5.1, but you have torch 2.4.0+cu124 which is incompatible."
_REQUIRES_BUT = re.compile(r"(?P<owner>[\w.-]+) (?P<owner_version>\d[\w.+]*) requires (?P<wanted>(?P<name>[\w.-]+)"
                           r"(?:\[[\w,]+\])?[=<>!~][^,\s]*(?:,[=<>!~][^,\s]*)*),? but you have (?P=name) (?P<have>\d[\w.+]*)")
# A protocol or library API whose two sides are of different releases (DCGM's "API version
# mismatch"); the NVIDIA driver's own "Driver/library version mismatch" is the kernel's and the
# library's, told apart below.
_API_MISMATCH = re.compile(r"\bAPI version mismatch\b", re.IGNORECASE)
# The kernel's own words for it (NVRM: "API mismatch: the client has the version A, but this kernel
# module has the version B"), as dmesg or the journal show them.
_DRIVER_LIBRARY = re.compile(r"\bDriver/library version mismatch|NVML/RM version mismatch|\bNVRM: API mismatch: the client\b",
                             re.IGNORECASE)
# Who speaks the API where the line names it: "Error retrieving DCGM MIG hierarchy" -> DCGM.
_API_NAMED = re.compile(r"\b(?P<name>DCGM|NVML|NCCL|CUDA|containerd|runc|Docker)\b")


def _mismatches(line: str, context: DiagnosisContext) -> list[StatedCause]:
    found: list[StatedCause] = []
    for match in _REQUIRES_BUT.finditer(line):
        found.append(_pin(match["name"], context, f"{match['owner']} {match['owner_version']} requires "
                                                   f"{match['wanted']} but {match['name']} {match['have']} is installed",
                          match["wanted"]))
    for match in _COMPILED_AGAINST.finditer(line):
        found.append(_pin(match["name"], context, f"a module was compiled against {match['name']}'s API version "
                                                  f"{match['built']} but {match['name']}'s is {match['have']}", None))
    for match in _CANNOT_IMPORT.finditer(line):
        package = match["module"].split(".")[0]
        found.append(_pin(package, context, f"the installed {package} has no {match['name']} (in {match['module']}), "
                                            "which the code importing it expects", None))
    for match in _UNDEFINED_SYMBOL.finditer(line):
        found.append(_rebuild(match["library"], match["symbol"], context))
    if _DRIVER_LIBRARY.search(line):
        found.append(StatedCause("version mismatch: NVIDIA driver", (
            "the NVIDIA kernel module loaded now and the driver's user-space library are of different versions "
            "(Driver/library version mismatch: the driver was updated and the old module is still loaded): reboot "
            "the host, or unload and reload the nvidia kernel modules (`sudo rmmod nvidia_uvm nvidia_drm "
            "nvidia_modeset nvidia`, then `sudo nvidia-smi`) with nothing using the GPU")))
    elif _API_MISMATCH.search(line):
        named = _API_NAMED.search(line)
        what = named["name"] if named else "library"
        if context.service in _DOCKER_SERVICES:
            text = (f"two sides of {what} are of different releases (API version mismatch): update the older one "
                    "to match the other (the client or the daemon, `docker version` shows both)")
            found.append(StatedCause(f"version mismatch: {what}", text))
        else:
            service = context.service
            key = "images.vllm" if service in _ENGINE_SERVICES else f"images.{service}"
            found.append(StatedCause(f"version mismatch: {what}", (
                f"{service}'s image and the {what} it talks to are of different releases (API version mismatch): "
                f"use {newer_image(service if service not in _ENGINE_SERVICES else 'vllm')} whose {what} matches "
                f"the host's, or roll back to the image tag that worked; where the host runs its own {what}, "
                "pick the image tag built for that version"), key))
    return found


def _pin(package: str, context: DiagnosisContext, what: str, wanted: str | None) -> StatedCause:
    """Two Python packages of versions that do not match: install them as one release ships them."""
    service = context.service
    pin = f"pin {wanted}" if wanted else f"install the {package} version it was released with"
    if service in _ENGINE_SERVICES:
        return StatedCause(f"version mismatch: {package}", (
            f"{what}: run vLLM with the {package} it was released with: under Compose use an images.vllm that "
            f"ships both together (a release image); natively `stackctl install-engine` rebuilds the engine's venv "
            f"with vLLM's own pins (or {pin} there); never `pip install {package}` over the engine, `pip check` "
            "lists what no longer matches"), "images.vllm")
    if service in _DOCKER_SERVICES:
        return StatedCause(f"version mismatch: {package}", f"{what}: {pin} where the failing program runs "
                                                           f"(`pip check` lists what no longer matches)")
    return StatedCause(f"version mismatch: {package}", (
        f"{what}: {service}'s image ships the two together: use {newer_image(service)} (or the tag that worked) "
        f"rather than installing {package} into it; where {service} runs natively, {pin}"), f"images.{service}")


def _rebuild(library: str | None, symbol: str, context: DiagnosisContext) -> StatedCause:
    """A compiled module that misses a symbol: built against another release of the library."""
    module = _compiled_module(library)
    service = context.service
    if _DRIVER_SYMBOL.search(symbol):
        return StatedCause("version mismatch: NVIDIA driver", (
            f"{module} calls {symbol}, which the host's NVIDIA driver (its libcuda) does not have: the driver is "
            "older than the CUDA it was built for: update the host's NVIDIA driver (`nvidia-smi` shows its "
            "version)" + (", or use an images.vllm built for the CUDA this driver supports"
                          if service in _ENGINE_SERVICES else "")), "images.vllm" if service in _ENGINE_SERVICES else None)
    against = next((name for prefix, name in _SYMBOL_OWNERS if symbol.startswith(prefix)), "library that exports it")
    what = (f"{module} was compiled against another {against} than the one installed (undefined symbol "
            f"{symbol[:60]}: an ABI mismatch)")
    if service in _ENGINE_SERVICES:
        return StatedCause(f"version mismatch: {against}", (
            f"{what}: install the two together: under Compose use an images.vllm that ships both (a release image), "
            f"or rebuild the image so {module} is compiled against the {against} it installs (install {against} "
            f"first, build {module} last); natively `stackctl install-engine` rebuilds the engine's venv (a pip "
            f"install of another {against} over vLLM breaks it)"), "images.vllm")
    if service in _DOCKER_SERVICES:
        return StatedCause(f"version mismatch: {against}", f"{what}: install {module} built for the installed {against} "
                                                           f"(or the {against} it was built for)")
    return StatedCause(f"version mismatch: {against}", (
        f"{what}: use {newer_image(service)} (or the tag that worked), whose release ships the two built together"),
        f"images.{service}")


def _compiled_module(library: str | None) -> str:
    """The package a compiled module belongs to: .../site-packages/vllm/_C.abi3.so -> vllm."""
    if not library:
        return "a compiled module"
    package = _SITE_PACKAGE.search(library)
    if package:
        return package["package"]
    directory, _, name = library.rpartition("/")
    # A package's private extension (_C.abi3.so) is its directory's.
    return directory.rsplit("/", 1)[-1] if name.startswith("_") and directory else name


# --- a unix socket with no server behind it --------------------------------------------------------

_SOCKET_PATH = r"(?:unix://|http\+unix://|unix:)?(?P<path>/?[\w./@+-]*?[\w-]+\.sock)\b"
# No such socket (its server never started, or made it elsewhere) or nobody accepting on it (a stale
# file its server left behind).
_SOCKET_MISSING = (
    re.compile(r"unix://(?P<path>/[\w./@+-]*?[\w-]+\.sock) (?:no such file|refused connection)"),
    re.compile(r"\bdial unix " + _SOCKET_PATH + r": connect: (?:no such file or directory|connection refused)"),
    re.compile(r"\bconnect\(\) to unix:" + _SOCKET_PATH + r" failed \((?:2: No such file or directory|111: Connection "
               r"refused)\)"),
    re.compile(r"(?:Cannot|Couldn't) connect to (?:the )?Docker daemon at " + _SOCKET_PATH),
)
# Docker's words where they name no socket ("http+docker://localunixsocket - is it running?").
_DOCKER_DOWN = re.compile(r"(?:Cannot|Couldn't) connect to (?:the )?Docker daemon\b|\bIs the docker daemon running\?")
# Older docker-compose says "is it running?" also where the daemon runs and refuses this user.
_OLD_COMPOSE = re.compile(r"Couldn't connect to Docker daemon at http\+(?:docker|unix)://")
# supervisorctl's own words for its socket missing or refused, where it names no path (Python 2's
# socket module: "error: <class 'socket.error'>, [Errno 2] No such file or directory: file: .../socket.py").
_SUPERVISORCTL_SOCKET = re.compile(r"<class 'socket\.error'>, \[Errno (?P<errno>2|111)\]")
_SOCKET_DENIED = re.compile(r"\bdial unix " + _SOCKET_PATH + r": connect: permission denied"
                            r"|permission denied while trying to connect to the (?P<docker>Docker) daemon socket at "
                            + _SOCKET_PATH.replace("(?P<path>", "(?P<dpath>"), re.IGNORECASE)


def _server(path: str) -> str:
    """The server a socket path names: /var/run/docker.sock -> docker, /run/supervisor.sock -> supervisord."""
    name = path.rsplit("/", 1)[-1].removesuffix(".sock")
    return "supervisord" if name.startswith("supervisor") else name


def _start(server: str, path: str) -> str:
    """How to start the server behind a socket, and how to point its client at one that runs."""
    if server == "docker":
        rootless = "/run/user/" in path
        start = ("`systemctl --user start docker` (a rootless engine; `sudo systemctl start docker` for the system "
                 "one)" if rootless else "`sudo systemctl enable --now docker` (`sudo journalctl -u docker` says why "
                 "it stopped)")
        return (f"start Docker: {start}, or point the client at the socket of the engine that runs: DOCKER_HOST "
                "(unix:///PATH) or `docker context use`; or set runtime: native in stack.yaml")
    if server == "supervisord":
        return ("start supervisord: for the native stack `stackctl up` starts it with the stack's own configuration "
                "and socket; a system one with `sudo systemctl start supervisor` (or `service supervisor start`), "
                "and `supervisord -n -c FILE` prints why it will not. If one runs (`pgrep -a supervisord`), point "
                "supervisorctl at its socket: `supervisorctl -c FILE` with the configuration file it was started "
                "with, whose [supervisorctl] serverurl names the socket its [unix_http_server] file= creates")
    if server == "containerd":
        return ("start containerd (`sudo systemctl start containerd`; `journalctl -u containerd` says why it stopped), "
                "or point the client at the socket of the one that runs (its --address, or `containerd config dump` "
                "shows grpc.address)")
    return (f"start {server} (the server that creates {path}; `systemctl status {server}` or its own log says why it "
            f"stopped), or point the client at the socket the running {server} listens on")


def _sockets(line: str, context: DiagnosisContext) -> list[StatedCause]:
    found: list[StatedCause] = []
    denied = _SOCKET_DENIED.search(line)
    if denied:
        path = denied["path"] or denied["dpath"]
        server = "docker" if denied["docker"] else _server(path)
        if server == "docker":
            text = (f"this user may not use Docker's socket ({path}, connect: permission denied): add it to the "
                    "docker group (`sudo usermod -aG docker $USER`, then log in again) or run with sudo; or set "
                    "runtime: native in stack.yaml")
            return [StatedCause(f"socket denied: {path}", text, "runtime")]
        return [StatedCause(f"socket denied: {path}", (
            f"this user may not use {path} ({server}'s socket, permission denied): `ls -l {path}` shows its owner and "
            f"group: add the user to that group, or have {server} create the socket with a mode that lets it in"))]
    for pattern in _SOCKET_MISSING:
        for match in pattern.finditer(line):
            found.append(_socket_missing(match["path"], context, refused="refused" in match[0].lower()))
    if not found and _DOCKER_DOWN.search(line):
        found.append(_socket_missing("/var/run/docker.sock", context, named=False))
    if not found and (errno := _SUPERVISORCTL_SOCKET.search(line)):
        found.append(_socket_missing("supervisor.sock", context, named=False,
                                     refused=errno["errno"] == "111"))
    if found and _OLD_COMPOSE.search(line):
        first = found[0]
        found[0] = StatedCause(first.name, first.text + "; older docker-compose says this also where the daemon runs "
                                                        "and this user may not use its socket: add the user to the "
                                                        "docker group (`sudo usermod -aG docker $USER`) or use sudo",
                               first.key)
    return found


def _socket_missing(path: str, context: DiagnosisContext, *, named: bool = True, refused: bool = False) -> StatedCause:
    path = "/" + path.lstrip("/") if named and not path.startswith("/") else path
    server = _server(path)
    said = (f"nothing answers on {path}" if named else f"the client finds no {server} socket") + (
        " (a socket file its server left behind, or nothing listening)" if refused else
        f" (no {server} is running there)")
    return StatedCause(f"socket: {server}", f"{said}: {_start(server, path)}",
                       "runtime" if server == "docker" else None)


# --- an image the registry refuses ------------------------------------------------------------------

_PULL_REFUSED = (
    re.compile(r"pull access denied for (?P<image>[^\s,\"']+)"),
    re.compile(r"manifest for (?P<image>[^\s,\"']+) not found"),
    re.compile(r"failed to resolve reference \\?\"?(?P<image>[^\s\"\\]+)\\?\"?: [^\n]*?\bnot found"),
)
_REFUSED_WORDS = re.compile(r"repository does not exist|manifest unknown", re.IGNORECASE)


def _refused_images(line: str, context: DiagnosisContext) -> list[StatedCause]:
    images = list(dict.fromkeys(match["image"].rstrip(":.") for pattern in _PULL_REFUSED
                                for match in pattern.finditer(line)))
    if not images and not _REFUSED_WORDS.search(line):
        return []
    services = [service for image in images if (service := image_service(image, context.images))]
    if not services and context.service not in _DOCKER_SERVICES:
        services = [context.service]
    key = f"images.{services[0]}" if services else None
    login = registry_login(images)
    which = (f"set {key} in stack.yaml to an image and tag that exist (or remove it for stackctl's default)" if key
             else "correct it in stack.yaml's images (or the compose file that names it)")
    named = ", ".join(images) or "the image"
    # An existing repository without the `latest` tag a pull without one asks for (image_tags).
    untagged = latest_missing(line)
    if untagged:
        return [StatedCause(f"image: {named}", no_latest_fix(untagged, key, registry_login([untagged])), key)]
    return [StatedCause(f"image: {named}", (
        f"the registry refuses {named}: no such repository or tag, or a private one. Check the image name and tag "
        f"first: {which}; an image meant to be built on this host (a Compose `build:`) is on no registry: build it "
        f"(`docker compose build`) before starting; a private registry needs {login}"), key)]


# --- what a service needs from the host and does not find -------------------------------------------

# Docker's words when no device driver (the NVIDIA runtime's, or a CDI spec) offers the gpu capability;
# Compose's `gpus: all` names none (`capabilities: []`), older releases `[[gpu]]`.
_NO_GPU_DRIVER = re.compile(r"could not select device driver \\?\"(?P<driver>[^\"\\]*)\\?\" with capabilities: "
                            r"\[(?:\[gpu\])?\]")
# nginx resolves each upstream name once, at start.
_UPSTREAM_UNKNOWN = re.compile(r"host not found in upstream \"(?P<host>[^\":/]+)(?::\d+)?\"")
# The Hub's refusal without a token: a gated or private repository.
_HUB_REFUSED = re.compile(r"GatedRepoError|Cannot access gated repo|You are trying to access a gated repo"
                          r"|\b40[13] Client Error: \w+ for url: https://huggingface\.co/"
                          # huggingface_hub's message under the error, where a log keeps only that line
                          r"|\b(?:Repo|Access to) model [\w.-]+/[\w.-]+ is (?:gated|restricted)\. You must (?:have access to "
                          r"it and )?be authenticated")
_HUB_REPOSITORY = re.compile(r"https://huggingface\.co/(?:api/models/)?(?P<repo>[\w.-]+/[\w.-]+)/(?:resolve|revision)/"
                             r"|(?:Access to model|Repo model) (?P<named>[\w.-]+/[\w.-]+) is")


def _host_lacks(line: str, named: re.Match[str] | None) -> list[StatedCause]:
    found: list[StatedCause] = []
    if _NO_GPU_DRIVER.search(line):
        found.append(StatedCause("no GPU device driver", (
            "Docker has no device driver that offers GPUs (could not select device driver ... with capabilities "
            "[[gpu]]): the NVIDIA Container Toolkit is missing or not registered with this Docker: install it "
            "(`sudo apt install nvidia-container-toolkit`; where an upgrade left it broken, reinstall "
            "nvidia-container-toolkit: remove the package and install it again), register "
            "it with `sudo nvidia-ctk runtime configure --runtime=docker` and restart Docker (`sudo systemctl restart "
            "docker`); a Docker installed as a snap does not see it: use docker-ce from Docker's repository. "
            + CDI_REQUEST)))
    upstream = _UPSTREAM_UNKNOWN.search(line)
    if upstream:
        host = upstream["host"]
        found.append(StatedCause(f"upstream host: {host}", (
            f"nginx could not resolve the upstream host {host} when it started (`getent hosts {host}` tells): "
            "stackctl's own upstreams are addresses (127.0.0.1 on one box, hosts: in stack.yaml on a split stack); "
            f"a container name resolves only inside its Compose network, once the container runs: nginx must share "
            f"that network and start after it (`depends_on:` the service named {host}), or resolve it at request time "
            "(`resolver 127.0.0.11 valid=10s;` and a variable in proxy_pass)"), "hosts"))
    if _HUB_REFUSED.search(line):
        repository = (named["repo"] or named["named"]) if named else None
        page = f"https://huggingface.co/{repository}" if repository else "the model's page"
        found.append(StatedCause("hub refused", (
            f"the Hugging Face Hub refuses {repository or 'the model'} without a token (a gated or private "
            f"repository): accept the model's terms at {page} with your account, then put a token with read access "
            "in .env as HF_TOKEN"), env="HF_TOKEN"))
    return found
