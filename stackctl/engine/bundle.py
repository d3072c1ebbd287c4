"""`stackctl bundle engine`: on a connected machine, the wheels a GPU host without network needs.

pip resolves vLLM (and the torch the compatibility table pins for it) for the TARGET host: its
Python version, machine and manylinux tags, with the markers evaluated as that host would
(`_pip_for_target`). The selection rules (bundle_selection) then leave out what the host has
or a lean server never imports, and exactly the rest is downloaded, each file checked against
the sha256 pip's index gave. Wheels already in stackctl's wheelhouse (install-engine's) are
copied instead of downloaded. `stackctl-bundle.json` records the lot (bundle_manifest).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import Version

from stackctl import __version__
from stackctl.engine._steps import StepResult, run_logged
from stackctl.engine.bundle_graph import BundleError, Resolution, parse_report
from stackctl.engine.bundle_lean import lean_rules
from stackctl.engine.bundle_manifest import (
    FORMAT_VERSION,
    MANIFEST_NAME,
    BundleFile,
    BundleHostPackage,
    BundleInstall,
    BundleLeftOut,
    BundleManifest,
    BundleTorch,
    file_sha256,
)
from stackctl.engine.bundle_selection import (
    Selection,
    SelectionRules,
    host_version_accepted,
    select,
)
from stackctl.engine.gpu_install import plan_gpu_engine
from stackctl.profiles.compat import PypiVllm, engine_serves, table

ProgressCallback = Callable[[str], None]
MACHINES = ("x86_64", "aarch64")
# The oldest glibc of the GPU hosts stackctl targets (Ubuntu 22.04, DGX OS 6); DGX Spark's
# DGX OS 7 is Ubuntu 24.04 (2.39). PyPI's vLLM 0.20.x wheels need 2.35, later ones 2.28.
DEFAULT_GLIBC = "2.35"


@dataclass(frozen=True)
class BundleTarget:
    """The host the bundle is for."""

    python: str  # X.Y
    machine: str
    glibc: str = DEFAULT_GLIBC

    @classmethod
    def this_host(cls) -> BundleTarget:
        return cls(f"{sys.version_info.major}.{sys.version_info.minor}", platform.machine())

    def platforms(self) -> list[str]:
        """Every manylinux tag a host with this glibc runs, newest first (pip's order of preference).
        pip does not widen one `--platform manylinux_2_35_x86_64` to older tags itself."""
        major, minor = (int(part) for part in self.glibc.split("."))
        tags = [f"manylinux_{major}_{n}_{self.machine}" for n in range(minor, 16, -1)]
        return [*tags, f"manylinux2014_{self.machine}"]

    def marker_environment(self) -> dict[str, str]:
        """PEP 508's environment markers as the target's CPython sees them."""
        full = f"{self.python}.0"
        return {"implementation_name": "cpython", "implementation_version": full, "os_name": "posix",
                "platform_machine": self.machine, "platform_release": "", "platform_system": "Linux",
                "platform_version": "", "python_full_version": full, "platform_python_implementation": "CPython",
                "python_version": self.python, "sys_platform": "linux"}

    def pip_options(self) -> list[str]:
        platforms = [option for tag in self.platforms() for option in ("--platform", tag)]
        return ["--only-binary=:all:", "--python-version", self.python, "--implementation", "cp", *platforms]


@dataclass(frozen=True)
class BundleRequest:
    vllm: PypiVllm
    target: BundleTarget
    out: Path
    reuse_torch: bool = False
    host_packages: dict[str, str] = field(default_factory=dict)
    lean: bool = False
    archive: bool = False


@dataclass(frozen=True)
class BuiltBundle:
    directory: Path
    manifest: BundleManifest
    archive: Path | None
    downloaded: int  # files fetched from the index
    copied: int  # files found in a local wheelhouse
    notes: tuple[str, ...] = ()


def choose_vllm(vllm: str | None, reuse_torch: str | None, architecture: str | None) -> PypiVllm:
    """The table's row to bundle: as asked, else what install-engine pins for the model (with
    --reuse-torch, the newest that serves it and pins that torch). Refuses a vLLM that pins
    another torch than the host's."""
    rows = {row.version: row for row in table().pypi_vllm}
    serving = sorted((row for row in rows.values() if engine_serves(row.version, architecture).ok is not False),
                     key=lambda row: Version(row.version))
    same_torch = [row for row in serving if row.torch == reuse_torch]
    if vllm is None and same_torch:
        return same_torch[-1]
    row = rows[plan_gpu_engine(architecture, None, vllm_version=vllm).vllm]
    if reuse_torch is not None and row.torch != reuse_torch:
        pick = (f"pick --vllm {same_torch[0].version}..{same_torch[-1].version} or bundle torch" if same_torch
                else f"no vLLM in the table pins torch {reuse_torch}, so bundle torch")
        raise BundleError(f"vLLM {row.version} pins torch {row.torch}; --reuse-torch {reuse_torch} cannot serve it: "
                          f"{pick} (drop --reuse-torch)")
    return row


def parse_freeze(text: str, source: str) -> dict[str, str]:
    """`pip list --format=freeze` (or `pip freeze`) output as {canonical name: version}."""
    found: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        name, separator, version = line.partition("==")
        if not separator or not name.strip() or not version.strip():
            if " @ " in line:  # a direct reference (file:// or VCS): no version to match
                continue
            raise BundleError(f"{source} line {number} is not `name==version` ({raw.strip()!r}): pass the output "
                              "of `python -m pip list --format=freeze` run with the target's Python")
        found[canonicalize_name(name.strip())] = version.strip()
    return found


def build_bundle(request: BundleRequest, on_progress: ProgressCallback | None = None) -> BuiltBundle:
    progress = on_progress or (lambda _message: None)
    out = _prepare_out(request.out)
    rules = SelectionRules(request.reuse_torch, request.host_packages, lean_rules() if request.lean else None)
    with tempfile.TemporaryDirectory(prefix="stackctl-bundle-") as scratch:
        log = Path(scratch) / "pip.log"
        resolution, notes = _resolve(request, rules, Path(scratch), log, progress)
        selection = select(resolution, rules)
        downloaded, copied = _fetch(selection, request.target, out, Path(scratch), log, progress)
    manifest = _manifest(request, selection, out)
    _remove_strays(out, manifest)
    manifest.write(out)
    archive = _write_archive(out, manifest, progress) if request.archive else None
    return BuiltBundle(out, manifest, archive, downloaded, copied, tuple(notes))


def _prepare_out(out: Path) -> Path:
    out = Path(out).expanduser().resolve()
    if out.exists() and not out.is_dir():
        raise BundleError(f"{out} exists and is not a directory: pick another --out")
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST_NAME).is_file():
        raise BundleError(f"{out} is not empty and holds no bundle: pick an empty or new directory for --out")
    out.mkdir(parents=True, exist_ok=True)
    return out


def _resolve(request: BundleRequest, rules: SelectionRules, scratch: Path, log: Path,
             progress: ProgressCallback) -> tuple[Resolution, list[str]]:
    """pip's resolution for the target; with host packages, a second pass that keeps the host's
    versions of what the bundle would otherwise hold, wherever every requirement accepts them."""
    target = request.target
    progress(f"resolving vllm=={request.vllm.version} for CPython {target.python} on {target.machine}")
    first = _pip_resolution(request, scratch / "report.json", None, log)
    would_hold = select(first, replace(rules, host_packages={})).kept
    keep = {package.name: request.host_packages[package.name] for package in would_hold
            if package.name in request.host_packages and package.name != "torch"
            and package.version != request.host_packages[package.name]
            and host_version_accepted(first, package, request.host_packages[package.name])}
    if not keep:
        return first, []
    progress(f"resolving again with {len(keep)} of the host's versions kept")
    constraints = scratch / "host-constraints.txt"
    constraints.write_text("".join(f"{name}=={Version(version).public}\n" for name, version in sorted(keep.items())))
    try:
        return _pip_resolution(request, scratch / "report-host.json", constraints, log), []
    except BundleError:
        conflict = ("the host's versions conflict with each other under vLLM's requirements: resolved without them "
                    "(only what the host has at the resolved versions is left out)")
        return first, [conflict]


def _pip_resolution(request: BundleRequest, report: Path, constraints: Path | None, log: Path) -> Resolution:
    target = request.target
    # `===`: an exact string match, so a local CPU build (2.13.0+cpu) in a find-links
    # directory never stands in for PyPI's CUDA torch.
    wanted = [f"vllm=={request.vllm.version}", f"torch==={request.vllm.torch}"]
    argv = [sys.executable, "-m", "stackctl.engine._pip_for_target", json.dumps(target.marker_environment()),
            "install", "--dry-run", "--ignore-installed", "--no-input", "--disable-pip-version-check",
            "--progress-bar", "off", "--report", str(report), "--target", str(report.parent / "target"),
            *target.pip_options(), *(["--constraint", str(constraints)] if constraints else []), *wanted]
    done = _pip(argv, log, "resolving")
    if not done.ok:
        raise BundleError(f"pip could not resolve {' '.join(wanted)} for CPython {target.python} on "
                          f"{target.machine} (glibc {target.glibc}). Last lines:\n  {done.tail}")
    return parse_report(json.loads(report.read_text()))


def _pip(argv: list[str], log: Path, what: str) -> StepResult:
    try:
        return run_logged(argv, log)
    except OSError as exc:
        raise BundleError(f"pip could not start while {what}: {exc}") from exc


def _fetch(selection: Selection, target: BundleTarget, out: Path, scratch: Path, log: Path,
           progress: ProgressCallback) -> tuple[int, int]:
    """Put every kept wheel in `out`: already there, copied from a local wheelhouse, or downloaded."""
    local = _local_wheels()
    missing = []
    copied = 0
    for package in selection.kept:
        path = out / package.filename
        if path.is_file() and file_sha256(path) == package.sha256:
            continue
        source = local.get(package.filename)
        if source is not None and file_sha256(source) == package.sha256:
            _link_or_copy(source, path)
            copied += 1
        else:
            missing.append(package)
    if missing:
        total = len(missing)
        progress(f"downloading {total} wheel{'s' if total != 1 else ''} into {out}")
        downloads = scratch / "downloads"
        urls = [f"{package.url.split('#', 1)[0]}#sha256={package.sha256}" for package in missing]
        argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-input", "--disable-pip-version-check",
                "--progress-bar", "off", "--dest", str(downloads), *target.pip_options(), *urls]
        done = _pip(argv, log, "downloading")
        if not done.ok:
            raise BundleError(f"pip could not download the bundle's wheels. Last lines:\n  {done.tail}")
        for package in missing:
            fetched = downloads / package.filename
            if not fetched.is_file() or file_sha256(fetched) != package.sha256:
                raise BundleError(f"{package.filename} did not download intact (its sha256 differs from the "
                                  "index's): run the command again")
            shutil.move(str(fetched), out / package.filename)
    return len(missing), copied


def _local_wheels() -> dict[str, Path]:
    """Wheels install-engine already downloaded (its wheelhouses under ~/.cache/stackctl/wheels)."""
    root = Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser() / "stackctl" / "wheels"
    return {path.name: path for path in sorted(root.glob("*/*.whl"))} if root.is_dir() else {}


def _link_or_copy(source: Path, destination: Path) -> None:
    destination.unlink(missing_ok=True)
    try:
        os.link(source, destination)
    except OSError:
        shutil.copyfile(source, destination)


def _manifest(request: BundleRequest, selection: Selection, out: Path) -> BundleManifest:
    lean = lean_rules() if request.lean else None
    files = tuple(BundleFile(name=package.filename, package=package.name, version=package.version,
                             sha256=package.sha256, size=(out / package.filename).stat().st_size)
                  for package in selection.kept)
    return BundleManifest(
        format=FORMAT_VERSION,
        created_by=f"stackctl {__version__}",
        vllm=request.vllm.version,
        torch=BundleTorch(version=request.vllm.torch, cuda=request.vllm.cuda, bundled=selection.torch_bundled),
        python=request.target.python,
        machine=request.target.machine,
        platforms=tuple(request.target.platforms()),
        lean=request.lean,
        environment=lean.environment_values() if lean else {},
        install=BundleInstall(no_deps=request.lean, requirements=tuple(file.name for file in files)),
        files=files,
        host_packages=tuple(BundleHostPackage(name=item.name, specifier=item.specifier, version=item.version)
                            for item in selection.host_requirements),
        left_out=tuple(BundleLeftOut(name=item.name, version=item.version, reason=item.reason)
                       for item in selection.left_out),
    )


def _remove_strays(out: Path, manifest: BundleManifest) -> None:
    """A bundle directory made again for other choices keeps only this bundle's files: install
    reads it as a find-links directory."""
    wanted = {file.name for file in manifest.files} | {MANIFEST_NAME}
    for path in out.iterdir():
        if path.name not in wanted and path.is_file() and path.suffix == ".whl":
            path.unlink()


def _write_archive(out: Path, manifest: BundleManifest, progress: ProgressCallback) -> Path:
    archive = out.with_name(out.name + ".tar")
    progress(f"writing {archive}")
    partial = archive.with_name(archive.name + ".partial")
    # Uncompressed: wheels are zip files already; tar only keeps them together.
    with tarfile.open(partial, "w", format=tarfile.PAX_FORMAT) as tar:
        tar.add(out / MANIFEST_NAME, arcname=f"{out.name}/{MANIFEST_NAME}")
        for file in manifest.files:
            tar.add(out / file.name, arcname=f"{out.name}/{file.name}")
    os.replace(partial, archive)
    return archive
