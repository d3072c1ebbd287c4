"""The real vLLM CUDA engine for tests on a machine without a GPU.

`prepare_cuda_engine` runs the real `stackctl install-engine --cuda` once per vLLM pin, into a
STACKCTL_HOME under ~/.cache/stackctl-tests (the venv, ~8.4 GB) with the wheelhouse under
~/.cache/stackctl/wheels (~3.7 GB): a fresh machine downloads ~2.5 GB from PyPI once (about
4-5 minutes here), every later run finds the marker and takes a second.

`libcuda.so.1` is the NVIDIA driver's own library: it comes with a driver, which needs a GPU.
vLLM's CUDA extensions link against it, so `import vllm.platforms.cuda` needs one to load. The
tests build a stub the way the CUDA toolkit ships `stubs/libcuda.so`: every `cu*` symbol the
engine's extensions import, each returning CUDA_ERROR_NO_DEVICE (100). Nothing calls them:
parsing flags and listing the model registry never touch the GPU.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from stackctl.engine.gpu_install import GpuEngineInfo, installed_gpu_engine
from stackctl.errors import StackError
from stackctl.profiles.compat import table

TEST_HOME = Path("~/.cache/stackctl-tests/home").expanduser()
STUB_CACHE = Path("~/.cache/stackctl-tests/libcuda-stub").expanduser()
INSTALL_TIMEOUT_S = 3600
CUDA_ERROR_NO_DEVICE = 100


@dataclass(frozen=True)
class CudaEngine:
    info: GpuEngineInfo
    home: Path  # the STACKCTL_HOME it lives in
    stub_dir: Path  # holds libcuda.so.1 (put it on LD_LIBRARY_PATH)

    def environment(self) -> dict[str, str]:
        current = os.environ.get("LD_LIBRARY_PATH", "")
        return {"STACKCTL_HOME": str(self.home),
                "LD_LIBRARY_PATH": f"{self.stub_dir}{os.pathsep + current if current else ''}"}


def newest_pin() -> str:
    from packaging.version import Version

    return max((row.version for row in table().pypi_vllm), key=Version)


def prepare_cuda_engine() -> CudaEngine:
    pin = newest_pin()
    engine_dir = TEST_HOME / "engines" / f"vllm-cuda-{pin}"
    info = installed_gpu_engine(engine_dir)
    if info is None:
        TEST_HOME.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [sys.executable, "-m", "stackctl", "install-engine", "--cuda", "--vllm", pin],
            env={**os.environ, "STACKCTL_HOME": str(TEST_HOME)}, cwd=TEST_HOME,
            capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False,
        )
        info = installed_gpu_engine(engine_dir)
        if done.returncode != 0 or info is None:
            raise StackError(f"`stackctl install-engine --cuda` failed (exit {done.returncode}): "
                             f"{(done.stderr or done.stdout)[-2000:]}")
    return CudaEngine(info, TEST_HOME, libcuda_stub(info.engine_dir))


def libcuda_stub(engine_dir: Path) -> Path:
    """A directory holding a stub libcuda.so.1 that satisfies the engine's extensions."""
    libraries = sorted(str(path) for path in engine_dir.glob("lib/python3*/site-packages/**/*.so*") if path.is_file())
    symbols: set[str] = set()
    for library in libraries:
        needed = subprocess.run(["readelf", "-d", library], capture_output=True, text=True, check=False).stdout
        if "libcuda.so.1" not in needed:
            continue
        undefined = subprocess.run(["nm", "-D", "--undefined-only", library], capture_output=True, text=True,
                                   check=False).stdout
        symbols |= {line.split()[-1].split("@")[0] for line in undefined.splitlines()
                    if line.split() and line.split()[-1].startswith("cu") and line.split()[-1][2:3].isupper()}
    if not symbols:
        raise StackError(f"no extension in {engine_dir} links libcuda.so.1: not a CUDA build?")
    source = "".join(f"int {name}(void) {{ return {CUDA_ERROR_NO_DEVICE}; }}\n" for name in sorted(symbols))
    key = hashlib.sha256(source.encode()).hexdigest()[:16]
    directory = STUB_CACHE / key
    library = directory / "libcuda.so.1"
    if not library.is_file():
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "stub.c").write_text(source)
        built = subprocess.run(["gcc", "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", str(library) + ".tmp",
                                str(directory / "stub.c")], capture_output=True, text=True, check=False)
        if built.returncode != 0:
            raise StackError(f"building the libcuda stub failed: {built.stderr[-1000:]}")
        os.replace(str(library) + ".tmp", library)
    return directory
