"""`stackctl install-engine --from`: install an engine bundle with no network.

The host's Python (PY, the one whose site-packages hold the reused torch) is checked against the
bundle first: its Python version, machine, the wheels' manylinux tags, torch's release and CUDA,
the packages the bundle counts on, every file's sha256. Any difference is refused with one line.
Then the engine venv is made from PY in the usual place (engines/vllm-cuda-V), with PY's
site-packages visible after the venv's own (a .pth file: PY may itself be a venv's python, so
`--system-site-packages` would not reach them), and pip installs from the bundle alone
(`--no-index`, no configuration read). The marker it writes is the one a PyPI install writes,
so the engine choice and the native runtime find it the same way.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import compatible_tags, cpython_tags, platform_tags
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from stackctl.engine._lock import exclusive_lock
from stackctl.engine._steps import run_logged
from stackctl.engine.bundle_graph import BundleError
from stackctl.engine.bundle_manifest import (
    MANIFEST_NAME,
    BundleManifest,
    file_sha256,
    read_manifest,
    verify_files,
)
from stackctl.engine.gpu_install import (
    MARKER_NAME,
    GpuEngineInfo,
    GpuEnginePlan,
    gpu_engine_dir,
    installed_gpu_engine,
    write_marker,
)
from stackctl.engine.install import engine_python
from stackctl.paths import stackctl_home

ProgressCallback = Callable[[str], None]
_HOST_SITE_PTH = "stackctl-host-site.pth"
_PROBE_TIMEOUT_S = 300

# Run by PY: what the bundle must match, as one JSON line.
_HOST_PROBE = r"""
import json, os, platform, sys, sysconfig
from importlib import metadata
wanted = json.loads(sys.argv[1])
stdlib = {os.path.realpath(sysconfig.get_path(key)) for key in ("stdlib", "platstdlib")}
def site_dir(entry):
    real = os.path.realpath(entry)
    if not entry or not os.path.isdir(real):
        return False
    if "site-packages" in real or "dist-packages" in real:
        return True
    return real not in stdlib and not any(real.startswith(lib + os.sep) for lib in stdlib)
found = {"python": "%d.%d" % sys.version_info[:2], "machine": platform.machine(),
         "site": [entry for entry in sys.path[1:] if site_dir(entry)], "packages": {}}
for name in wanted["packages"]:
    try:
        found["packages"][name] = metadata.version(name)
    except metadata.PackageNotFoundError:
        pass
if wanted["torch"]:
    try:
        import torch
        found["torch"] = {"version": torch.__version__, "cuda": torch.version.cuda,
                          "site": os.path.dirname(os.path.dirname(torch.__file__))}
    except Exception as exc:
        found["torch_error"] = "%s: %s" % (type(exc).__name__, exc)
print(json.dumps(found))
"""

_ENGINE_PROBE = """
import json, sys, torch, vllm
for module in sys.argv[1:]:
    __import__(module)
print(json.dumps({"torch": torch.__version__, "cuda": torch.version.cuda, "vllm": vllm.__version__,
                  "torch_file": torch.__file__}))
"""


@dataclass(frozen=True)
class HostPython:
    """What the target interpreter has, for the checks (probe_host_python)."""

    executable: Path
    python: str
    machine: str
    site_dirs: tuple[str, ...]
    packages: dict[str, str]
    torch_version: str | None = None
    torch_cuda: str | None = None
    torch_site: str | None = None
    torch_error: str | None = None


def default_host_python() -> Path:
    """The interpreter stackctl's own venv was made from."""
    return Path(getattr(sys, "_base_executable", sys.executable))


def probe_host_python(python: Path, manifest: BundleManifest) -> HostPython:
    wanted = {"torch": not manifest.torch.bundled, "packages": [item.name for item in manifest.host_packages]}
    try:
        done = subprocess.run([str(python), "-c", _HOST_PROBE, json.dumps(wanted)], capture_output=True, text=True,
                              timeout=_PROBE_TIMEOUT_S, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BundleError(f"{python} cannot be run ({exc}): pass --python with the host's Python") from None
    lines = done.stdout.strip().splitlines()
    try:
        found = json.loads(lines[-1])
    except (IndexError, ValueError):
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise BundleError(f"{python} is not a Python stackctl can use ({last}): pass --python with the host's "
                          "Python 3") from None
    torch = found.get("torch") or {}
    return HostPython(Path(python), found["python"], found["machine"], tuple(found["site"]),
                      {canonicalize_name(name): version for name, version in found["packages"].items()},
                      torch.get("version"), torch.get("cuda"), torch.get("site"), found.get("torch_error"))


def supported_tags(python: str) -> set[str]:
    """The wheel tags a CPython `python` (X.Y) on this machine installs, as strings."""
    version = tuple(int(part) for part in python.split("."))
    platforms = list(platform_tags())
    tags = [*cpython_tags(version, platforms=platforms),
            *compatible_tags(version, interpreter=f"cp{version[0]}{version[1]}", platforms=platforms)]
    return {str(tag) for tag in tags}


def check_bundle_fits(manifest: BundleManifest, host: HostPython, tags: set[str]) -> None:
    """Refuse (one BundleError line) a bundle made for another host than `host`."""
    python = host.executable
    if host.python != manifest.python:
        raise BundleError(f"this bundle is for Python {manifest.python}, but {python} is Python {host.python}: "
                          f"pass --python with a Python {manifest.python}, or make the bundle with "
                          f"--python-version {host.python}")
    if host.machine != manifest.machine:
        raise BundleError(f"this bundle is for {manifest.machine}, but this host is {host.machine}: make it with "
                          f"--machine {host.machine}")
    for file in manifest.files:
        _check_wheel_tags(file.name, tags)
    if not manifest.torch.bundled:
        _check_torch(manifest, host)
    for item in manifest.host_packages:
        have = host.packages.get(canonicalize_name(item.name))
        if have is None or not _accepts(item.specifier, have):
            found = f"has {item.name} {have}" if have else f"lacks {item.name}"
            raise BundleError(f"this bundle counts on the host's {item.name} ({item.specifier or 'any version'}; "
                              f"the --host-packages list said {item.version}), but {python} {found}: make the "
                              f"bundle with a list from this Python (`{python} -m pip list --format=freeze`)")


def _check_wheel_tags(name: str, tags: set[str]) -> None:
    try:
        wheel_tags = parse_wheel_filename(name)[3]
    except InvalidWheelFilename:
        raise BundleError(f"{name} in the bundle is not a wheel: copy the bundle again") from None
    if any(str(tag) in tags for tag in wheel_tags):
        return
    wanted = sorted({tag.platform for tag in wheel_tags})
    libc = "glibc " + platform.libc_ver()[1] if platform.libc_ver()[0] == "glibc" else "C library"
    raise BundleError(f"{name} is built for {', '.join(wanted)}, which this host ({libc}) cannot install: make the "
                      "bundle with --glibc set to this host's glibc (`ldd --version`)")


def _check_torch(manifest: BundleManifest, host: HostPython) -> None:
    torch = manifest.torch
    python = host.executable
    again = "pass --python with the interpreter that has it, or make the bundle without --reuse-torch"
    if host.torch_version is None:
        why = f" ({host.torch_error})" if host.torch_error else ""
        raise BundleError(f"this bundle reuses the host's torch {torch.version} (CUDA {torch.cuda}), but {python} "
                          f"has no torch{why}: {again}")
    if _release(host.torch_version) != torch.version:
        raise BundleError(f"this bundle reuses torch {torch.version}, but {python} has torch {host.torch_version}: "
                          f"{again} (vLLM {manifest.vllm} pins torch {torch.version})")
    if host.torch_cuda != torch.cuda:
        built = f"CUDA {host.torch_cuda}" if host.torch_cuda else "no CUDA (a CPU build)"
        raise BundleError(f"this bundle reuses torch {torch.version} built for CUDA {torch.cuda}, but {python}'s "
                          f"torch {host.torch_version} is built for {built}: {again}")


def _release(version: str) -> str:
    try:
        return Version(version).public
    except InvalidVersion:
        return version.split("+", 1)[0]


def _accepts(specifier: str, version: str) -> bool:
    try:
        return SpecifierSet(specifier).contains(Version(version), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return False


@contextmanager
def opened_bundle(source: Path) -> Iterator[Path]:
    """The directory holding the bundle: `source` itself, or where its .tar was unpacked."""
    source = Path(source).expanduser()
    if source.is_dir():
        yield source
        return
    if not source.is_file():
        raise BundleError(f"no bundle at {source}: pass the directory `stackctl bundle engine --out` wrote, or its .tar")
    if not tarfile.is_tarfile(source):
        raise BundleError(f"{source} is neither a bundle directory nor a tar archive: pass what "
                          "`stackctl bundle engine` wrote")
    scratch_root = stackctl_home() / "engines"
    scratch_root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".bundle-", dir=scratch_root) as scratch:
        _unpack(source, Path(scratch))
        found = sorted(Path(scratch).glob(f"*/{MANIFEST_NAME}")) or sorted(Path(scratch).glob(MANIFEST_NAME))
        if not found:
            raise BundleError(f"{source} holds no {MANIFEST_NAME}: it is not a stackctl engine bundle")
        yield found[0].parent


def _unpack(archive: Path, into: Path) -> None:
    try:
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                if not (member.isfile() or member.isdir()) or member.name.startswith("/") or ".." in member.name.split("/"):
                    raise BundleError(f"{archive} holds {member.name!r}, which no bundle has: refusing to unpack it")
            tar.extractall(into, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    except (OSError, tarfile.TarError) as exc:
        raise BundleError(f"{archive} cannot be unpacked ({exc}): copy it again") from None


def install_bundle(source: Path, python: Path | None = None, *,
                   on_progress: ProgressCallback | None = None) -> GpuEngineInfo:
    """Check the bundle against the host, then install it into engines/vllm-cuda-V, offline."""
    progress = on_progress or (lambda _message: None)
    python = Path(python).expanduser() if python else default_host_python()
    with opened_bundle(source) as directory:
        manifest = read_manifest(directory)
        progress(f"checking the bundle against {python}")
        host = probe_host_python(python, manifest)
        check_bundle_fits(manifest, host, supported_tags(host.python))
        progress(f"checking the sha256 of {len(manifest.files)} files")
        verify_files(directory, manifest)
        digest = file_sha256(directory / MANIFEST_NAME)
        engine_dir = gpu_engine_dir(manifest.vllm)
        with exclusive_lock(engine_dir.parent / f".{engine_dir.name}.lock"):
            found = _already_installed(engine_dir, digest)
            if found is not None:
                return found
            return _install(manifest, directory, Path(source).expanduser().resolve(), digest, host, engine_dir,
                            progress)


def _already_installed(engine_dir: Path, digest: str) -> GpuEngineInfo | None:
    found = installed_gpu_engine(engine_dir)
    if found is None:
        return None
    marker = json.loads((engine_dir / MARKER_NAME).read_text())
    if (marker.get("bundle") or {}).get("sha256") == digest:
        return found
    origin = f"from the bundle {marker['bundle']['source']}" if marker.get("bundle") else "from PyPI"
    raise BundleError(f"vLLM {found.vllm_version} is already installed in {engine_dir} ({origin}): remove that "
                      "directory first to replace it (stop any stack that runs it)")


def _install(manifest: BundleManifest, directory: Path, source: Path, digest: str, host: HostPython,
             engine_dir: Path, progress: ProgressCallback) -> GpuEngineInfo:
    started = time.monotonic()
    if engine_dir.exists():  # no marker: a half-done install; start over
        shutil.rmtree(engine_dir)
    engine_dir.parent.mkdir(parents=True, exist_ok=True)
    log = engine_dir.parent / f"{engine_dir.name}-install.log"
    log.write_text("")
    progress(f"creating venv {engine_dir} from {host.executable}")
    # No pip of its own: ensurepip is a separate package on Debian/Ubuntu (python3.X-venv) that GPU
    # images often lack; pip comes from PY's site-packages, which the venv sees (below).
    _step([str(host.executable), "-m", "venv", "--without-pip", str(engine_dir)], log, "creating the venv",
          f"{host.executable} cannot make a venv: install its venv module (Debian/Ubuntu: "
          f"`apt install python{host.python}-venv`)")
    _see_host_site(engine_dir, host)
    python = engine_python(engine_dir)
    files = [str(directory / name) for name in manifest.install.requirements]
    progress(f"installing {len(files)} wheels from {directory} (no network)")
    # --isolated and no configuration file: nothing but the bundle (no index, no find-links of
    # the host's pip.conf) can be installed.
    _step([str(python), "-m", "pip", "install", "--isolated", "--no-input", "--disable-pip-version-check",
           "--progress-bar", "off", "--no-index", "--find-links", str(directory),
           *(["--no-deps"] if manifest.install.no_deps else []), *files], log, "installing the wheels",
          "pip could not install the bundle offline", env={"PIP_CONFIG_FILE": os.devnull})
    modules = ["vllm.entrypoints.openai.api_server"] if manifest.lean else []
    progress("checking that vllm imports" + (" with its OpenAI server" if modules else ""))
    out = _step([str(python), "-c", _ENGINE_PROBE, *modules], log, "importing vllm",
                "the engine installed from the bundle does not import", env=manifest.environment)
    try:
        versions = json.loads(out.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise BundleError(f"the engine in {engine_dir} did not say which vLLM and torch it has. Full log: {log}") from None
    if versions["cuda"] != manifest.torch.cuda:
        raise BundleError(f"torch {versions['torch']} in {engine_dir} is built for CUDA {versions['cuda']}, not "
                          f"{manifest.torch.cuda} as the bundle says: make the bundle again")
    plan = GpuEnginePlan(manifest.vllm, manifest.torch.version, manifest.torch.cuda, manifest.machine,
                         f"from the bundle {source}")
    write_marker(engine_dir, {
        "kind": "cuda",
        "plan": plan.__dict__,
        "vllm_version": versions["vllm"],
        "torch_version": versions["torch"],
        "torch_cuda": versions["cuda"],
        "environment": manifest.environment,
        "bundle": {"source": str(source), "manifest": MANIFEST_NAME, "format": manifest.format, "sha256": digest,
                   "lean": manifest.lean, "torch_bundled": manifest.torch.bundled},
        "host_python": str(host.executable),
        "host_site": list(host.site_dirs),
        "install_seconds": round(time.monotonic() - started, 1),
    })
    progress(f"vLLM {versions['vllm']} (torch {versions['torch']}, CUDA {versions['cuda']}) ready in {engine_dir}")
    return GpuEngineInfo(engine_dir, python, versions["vllm"], versions["torch"], versions["cuda"], plan,
                         dict(manifest.environment))


def _see_host_site(engine_dir: Path, host: HostPython) -> None:
    """PY's site directories after the venv's own: `site.addsitedir` also runs their .pth files."""
    site_packages = next((engine_dir / "lib").glob("python*/site-packages"))
    lines = [f"import site; site.addsitedir({entry!r})\n" for entry in host.site_dirs]
    if host.torch_site and host.torch_site not in host.site_dirs:
        lines.append(f"import site; site.addsitedir({host.torch_site!r})\n")
    (site_packages / _HOST_SITE_PTH).write_text("".join(lines))


def _step(argv: list[str], log: Path, what: str, failure: str, env: dict[str, str] | None = None) -> str:
    try:
        done = run_logged(argv, log, env={**os.environ, **(env or {})})
    except OSError as exc:
        raise BundleError(f"{failure}: {exc}") from None
    if not done.ok:
        last = next((line.strip() for line in reversed(done.output.splitlines()) if line.strip()), "no output")
        raise BundleError(f"{failure} (while {what}, exit {done.code}): {last}. Full log: {log}")
    return done.output
