"""Install PyPI's vLLM CUDA build into a venv of its own, pinned by the compatibility table.

The version is the newest PyPI vLLM in stackctl/profiles/compat.yaml that serves the model's
architecture and whose torch's CUDA runs on the host's driver. The wheels are downloaded once
into a wheelhouse under ~/.cache/stackctl (keyed by version and machine), then installed from
it with `--no-index`: a second install, or a reinstall after the venv was removed, downloads
nothing. What was installed is recorded in the venv's marker file.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from stackctl.engine._lock import exclusive_lock
from stackctl.engine._steps import run_logged
from stackctl.engine.install import EngineInstallError, engine_python
from stackctl.paths import stackctl_home
from stackctl.profiles.compat import PypiVllm, architecture_floor, best_pypi_vllm, min_driver, table

MARKER_NAME = "stackctl-engine.json"
_WHEELHOUSE_DONE = "stackctl-wheelhouse.json"

ProgressCallback = Callable[[str], None]


@dataclass(frozen=True)
class GpuEnginePlan:
    """What `install-engine` puts in the venv: the pins and why."""

    vllm: str
    torch: str
    cuda: str
    machine: str
    reason: str
    # A PyTorch index for a torch build PyPI does not carry (e.g. .../whl/cu130 on aarch64).
    torch_index_url: str | None = None


@dataclass(frozen=True)
class GpuEngineInfo:
    engine_dir: Path
    python: Path
    vllm_version: str
    torch_version: str
    torch_cuda: str | None
    plan: GpuEnginePlan
    # What the engine's process needs in its environment (a lean bundle: VLLM_USE_FLASHINFER_SAMPLER=0).
    environment: dict[str, str] = field(default_factory=dict)


def gpu_engine_dir(vllm_version: str) -> Path:
    """One venv per pinned version: installing a newer one never breaks a running stack."""
    return stackctl_home() / "engines" / f"vllm-cuda-{vllm_version}"


def wheelhouse_dir(plan: GpuEnginePlan) -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser()
    return cache / "stackctl" / "wheels" / f"vllm-cuda-{plan.vllm}-{plan.machine}"


def plan_gpu_engine(architecture: str | None, driver_major: int | None, *, machine: str | None = None,
                    vllm_version: str | None = None, torch_index_url: str | None = None) -> GpuEnginePlan:
    """The pins for this model on this host, or an EngineInstallError that says what to do."""
    machine = machine or platform.machine()
    if vllm_version:
        row = next((row for row in table().pypi_vllm if row.version == vllm_version), None)
        if row is None:
            known = ", ".join(row.version for row in table().pypi_vllm)
            raise EngineInstallError(f"vLLM {vllm_version} is not in stackctl's table of CUDA wheels; pick one of {known}")
        floor = architecture_floor(architecture)
        if floor and _older(row.version, floor.vllm):
            raise EngineInstallError(f"vLLM {vllm_version} cannot serve {architecture} (needs vLLM >= {floor.vllm}); "
                                     "drop --vllm to get the newest that does")
        return _plan(row, machine, f"vLLM {row.version} as asked", torch_index_url)
    row = best_pypi_vllm(architecture, driver_major)
    if row is None:
        newest = best_pypi_vllm(architecture)
        if newest is not None and driver_major is not None:
            needed = min_driver(newest.cuda)
            raise EngineInstallError(
                f"PyPI's vLLM {newest.version} is built for CUDA {newest.cuda}, which needs NVIDIA driver >= {needed} "
                f"(found {driver_major}): install nvidia-driver-{needed}-open (`sudo apt install "
                f"nvidia-driver-{needed}-open`) and reboot")
        floor = architecture_floor(architecture)
        raise EngineInstallError(
            f"no vLLM CUDA wheel in stackctl's table serves {architecture}"
            + (f" (it needs vLLM >= {floor.vllm})" if floor else "") + "; use --runtime compose with an NGC image, "
            "or add the release to stackctl/profiles/compat.yaml")
    floor = architecture_floor(architecture)
    why = (f"newest PyPI vLLM in the table; serves {architecture} (from {floor.vllm})" if floor
           else f"newest PyPI vLLM in the table ({architecture or 'architecture'} not in the table)")
    if driver_major is not None:
        why += f"; its CUDA {row.cuda} runs on driver {driver_major} (>= {min_driver(row.cuda)})"
    return _plan(row, machine, why, torch_index_url)


def _plan(row: PypiVllm, machine: str, reason: str, torch_index_url: str | None) -> GpuEnginePlan:
    return GpuEnginePlan(row.version, row.torch, row.cuda, machine, reason, torch_index_url)


def _older(left: str, right: str) -> bool:
    from packaging.version import Version

    return Version(left) < Version(right)


def installed_gpu_engine(engine_dir: Path) -> GpuEngineInfo | None:
    """The CUDA engine recorded in engine_dir's marker, if fully installed."""
    try:
        data = json.loads((Path(engine_dir) / MARKER_NAME).read_text())
    except (OSError, ValueError):
        return None
    if data.get("kind") != "cuda" or not engine_python(engine_dir).exists():
        return None
    plan = GpuEnginePlan(**data["plan"])
    return GpuEngineInfo(Path(engine_dir), engine_python(engine_dir), data["vllm_version"], data["torch_version"],
                         data.get("torch_cuda"), plan, dict(data.get("environment") or {}))


def installed_gpu_engines() -> list[GpuEngineInfo]:
    """Every CUDA engine under $STACKCTL_HOME/engines, newest vLLM first."""
    from packaging.version import Version

    found = [info for path in sorted((stackctl_home() / "engines").glob("vllm-cuda-*"))
             if (info := installed_gpu_engine(path)) is not None]
    return sorted(found, key=lambda info: Version(info.vllm_version.split("+")[0]), reverse=True)


def install_gpu_engine(plan: GpuEnginePlan, engine_dir: Path | None = None, *, wheelhouse: Path | None = None,
                       on_progress: ProgressCallback | None = None) -> GpuEngineInfo:
    """Create the venv with vllm==plan.vllm and its CUDA torch; a no-op when the marker says so."""
    engine_dir = Path(engine_dir or gpu_engine_dir(plan.vllm))
    progress = on_progress or (lambda _message: None)
    found = installed_gpu_engine(engine_dir)
    if found is not None and found.plan.vllm == plan.vllm:
        return found
    with exclusive_lock(engine_dir.parent / f".{engine_dir.name}.lock"):
        found = installed_gpu_engine(engine_dir)
        if found is not None and found.plan.vllm == plan.vllm:
            return found
        return _install(plan, engine_dir, Path(wheelhouse or wheelhouse_dir(plan)), progress)


def _requirements(plan: GpuEnginePlan) -> list[str]:
    # `===` (exact string match) for torch: PEP 440's `==2.13.0` also matches a local CPU build
    # such as 2.13.0+cpu that a find-links directory may offer, and that build has no CUDA.
    # A PyTorch index serves its builds as 2.13.0+cu130: there `==` is what matches.
    torch = f"torch=={plan.torch}" if plan.torch_index_url else f"torch==={plan.torch}"
    return [f"vllm=={plan.vllm}", torch]


def _install(plan: GpuEnginePlan, engine_dir: Path, wheelhouse: Path, progress: ProgressCallback) -> GpuEngineInfo:
    started = time.monotonic()
    if engine_dir.exists():  # no marker: a half-done install; start over
        shutil.rmtree(engine_dir)
    engine_dir.parent.mkdir(parents=True, exist_ok=True)
    log_path = engine_dir.parent / f"{engine_dir.name}-install.log"
    log_path.write_text("")
    base_python = getattr(sys, "_base_executable", sys.executable)
    progress(f"creating venv {engine_dir}")
    _run([base_python, "-m", "venv", str(engine_dir)], log_path, "creating the venv", progress)
    pip = [str(engine_python(engine_dir)), "-m", "pip", "--no-input", "--disable-pip-version-check"]

    downloaded = _fill_wheelhouse(plan, wheelhouse, pip, log_path, progress)
    progress(f"installing vllm=={plan.vllm} and torch {plan.torch} (CUDA {plan.cuda}) from {wheelhouse}")
    _run([*pip, "install", "--no-index", "--find-links", str(wheelhouse), *_requirements(plan)],
         log_path, f"installing vllm=={plan.vllm}", progress)

    progress("checking that vllm imports")
    probe = ("import json, torch, vllm; print(json.dumps({'torch': torch.__version__, "
             "'cuda': torch.version.cuda, 'vllm': vllm.__version__}))")
    out = _run([str(engine_python(engine_dir)), "-c", probe], log_path, "importing vllm", progress)
    versions = json.loads(out.strip().splitlines()[-1])
    if not versions.get("cuda"):
        raise EngineInstallError(f"torch {versions['torch']} in {engine_dir} is a CPU build; vLLM's CUDA build needs "
                                 "the CUDA one (remove the local CPU wheel from pip's find-links, or pass --torch-index-url)")
    marker = {
        "kind": "cuda",
        "plan": plan.__dict__,
        "vllm_version": versions["vllm"],
        "torch_version": versions["torch"],
        "torch_cuda": versions["cuda"],
        "wheelhouse": str(wheelhouse),
        "downloaded_bytes": downloaded,
        "venv_bytes": _tree_bytes(engine_dir),
        "install_seconds": round(time.monotonic() - started, 1),
    }
    write_marker(engine_dir, marker)
    progress(f"vLLM {versions['vllm']} (torch {versions['torch']}, CUDA {versions['cuda']}) ready in {engine_dir}")
    return GpuEngineInfo(engine_dir, engine_python(engine_dir), versions["vllm"], versions["torch"],
                         versions["cuda"], plan)


def write_marker(engine_dir: Path, marker: dict[str, object]) -> None:
    """Record a finished install: `installed_gpu_engine` reads it (written last, so a half-done
    install has none)."""
    (Path(engine_dir) / MARKER_NAME).write_text(json.dumps(marker, indent=2) + "\n")


def _fill_wheelhouse(plan: GpuEnginePlan, wheelhouse: Path, pip: list[str], log_path: Path,
                     progress: ProgressCallback) -> int:
    """Download every wheel the install needs, once; returns the bytes this call added."""
    done = wheelhouse / _WHEELHOUSE_DONE
    if done.is_file():
        progress(f"wheels already in {wheelhouse}")
        return 0
    wheelhouse.mkdir(parents=True, exist_ok=True)
    before = _tree_bytes(wheelhouse)
    extra = ["--extra-index-url", plan.torch_index_url] if plan.torch_index_url else []
    progress(f"downloading vllm=={plan.vllm} and its CUDA dependencies (about 2.5 GB) into {wheelhouse}")
    _run([*pip, "download", "--dest", str(wheelhouse), "--progress-bar", "off", *extra, *_requirements(plan)],
         log_path, f"downloading vllm=={plan.vllm}", progress)
    added = _tree_bytes(wheelhouse) - before
    done.write_text(json.dumps({"plan": plan.__dict__, "bytes": _tree_bytes(wheelhouse)}) + "\n")
    return added


def _run(argv: list[str], log_path: Path, what: str, progress: ProgressCallback) -> str:
    """One install step; its output goes to the log, pip's package lines to `progress`."""

    def show(line: str) -> None:
        if line.startswith(("Downloading ", "Collecting ", "Saved ")):
            progress(line.strip()[:120])

    try:
        done = run_logged(argv, log_path, on_line=show)
    except OSError as exc:
        raise EngineInstallError(f"vLLM CUDA engine install failed while {what}: {exc}") from exc
    if not done.ok:
        raise EngineInstallError(
            f"vLLM CUDA engine install failed while {what} (exit {done.code}). Last lines:\n  {done.tail}\n"
            f"Full log: {log_path}. PyPI's vLLM wheels pin an exact torch; on aarch64 (GB10) pass "
            "--torch-index-url https://download.pytorch.org/whl/cu130 if PyPI has no CUDA torch for it; "
            "about 12 GB of free disk are needed (wheels and venv). Re-run to retry: downloaded wheels are kept.")
    return done.output


def _tree_bytes(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return total
