"""An engine bundle made from PyPI and installed with no network, as on an air-gapped GPU host.

The host: a Python that has torch 2.13.0 and its dependencies and nothing else (hard-linked from
the CUDA test engine, tests/support/torch_host.py). The bundle: `stackctl bundle engine --vllm
0.32.0 --reuse-torch 2.13.0 --lean --host-packages <that Python's freeze> --archive`, resolved
by pip against PyPI (the wheels come from the CUDA engine's wheelhouse when they are there).
The install: `stackctl install-engine --from <the .tar> --python <the host's Python>` inside
`unshare --net`, a network namespace with no interface up. Then vLLM's OpenAI server imports in
the new engine (with the stub libcuda), torch comes from the host's site-packages, and the
engine choice finds the engine with the environment it needs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stackctl.config import parse_stack_config
from stackctl.engine.bundle_manifest import MANIFEST_NAME, file_sha256, read_manifest
from stackctl.engine.gpu_install import installed_gpu_engine
from tests.support.cli import run_cli
from tests.support.torch_host import make_torch_host

pytestmark = [pytest.mark.integration, pytest.mark.vllm_cuda]

VLLM = "0.32.0"
TORCH = "2.13.0"


@pytest.fixture(scope="module")
def torch_host(vllm_cuda_engine, tmp_path_factory):
    where = tmp_path_factory.mktemp("host") / "venv"
    python, names = make_torch_host(vllm_cuda_engine.info.python, where)
    freeze = subprocess.run([str(python), "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"],
                            capture_output=True, text=True, check=True).stdout
    listed = where.parent / "freeze.txt"
    listed.write_text(freeze)
    return python, names, listed


@pytest.fixture(scope="module")
def bundle(torch_host, tmp_path_factory):
    _python, _names, listed = torch_host
    out = tmp_path_factory.mktemp("bundle") / "vllm-bundle"
    done = run_cli("bundle", "engine", "--vllm", VLLM, "--reuse-torch", TORCH, "--lean", "--host-packages",
                   str(listed), "--archive", "--out", str(out), cwd=out.parent, timeout=1800)
    assert done.returncode == 0, done.stdout + done.stderr
    return out, done.stdout


@pytest.fixture(scope="module")
def offline_install(vllm_cuda_engine, torch_host, bundle, tmp_path_factory):
    python, _names, _listed = torch_host
    out, _printed = bundle
    home = tmp_path_factory.mktemp("home")
    env = {**os.environ, **vllm_cuda_engine.environment(), "STACKCTL_HOME": str(home), "COLUMNS": "200"}
    done = subprocess.run([shutil.which("unshare") or "unshare", "--net", "--", *_stackctl(),
                           "install-engine", "--from", str(out.with_name(out.name + ".tar")), "--python", str(python)],
                          env=env, capture_output=True, text=True, timeout=1800, check=False, cwd=home)
    assert done.returncode == 0, done.stdout + done.stderr
    return home, done


def _stackctl() -> list[str]:
    return [sys.executable, "-m", "stackctl"]


def test_the_bundle_holds_vllm_and_what_the_host_lacks_never_torch(bundle, torch_host):
    out, printed = bundle
    _python, host_names, _listed = torch_host
    manifest = read_manifest(out)
    names = {file.package for file in manifest.files}
    assert manifest.vllm == VLLM and manifest.lean and manifest.install.no_deps
    assert manifest.torch.model_dump() == {"version": TORCH, "cuda": "13.0", "bundled": False}
    assert manifest.environment == {"VLLM_USE_FLASHINFER_SAMPLER": "0"}
    assert "vllm" in names and {"xgrammar", "openai", "fastapi", "uvicorn", "pyzmq"} <= names
    assert not names & set(host_names)  # torch, triton, nvidia-*: the host's
    assert not names & {"flashinfer-python", "torchvision", "tilelang", "opencv-python-headless", "mcp"}
    left = {item.name: item.reason for item in manifest.left_out}
    assert left["torch"] == f"reused: the host has torch {TORCH}"
    assert left["flashinfer-python"].startswith("lean: FlashInfer")
    for file in manifest.files:
        assert file_sha256(out / file.name) == file.sha256 and (out / file.name).stat().st_size == file.size
    assert sorted(path.name for path in out.iterdir()) == sorted([MANIFEST_NAME, *(f.name for f in manifest.files)])
    # What it printed: what was left out and why, the size, the command for the target.
    assert "left out:" in printed and "lean: FlashInfer" in printed and "reused: the host has torch" in printed
    assert f"{len(manifest.files)} wheels" in printed
    assert f"stackctl install-engine --from {out}.tar --python" in printed


def test_it_installs_with_no_network_and_the_openai_server_imports(offline_install, vllm_cuda_engine, torch_host):
    home, done = offline_install
    python, _names, _listed = torch_host
    assert f"vLLM {VLLM}" in done.stdout and "VLLM_USE_FLASHINFER_SAMPLER=0" in done.stdout
    engine_dir = home / "engines" / f"vllm-cuda-{VLLM}"
    info = installed_gpu_engine(engine_dir)
    assert info is not None and info.vllm_version == VLLM and info.torch_cuda == "13.0"
    assert info.environment == {"VLLM_USE_FLASHINFER_SAMPLER": "0"}
    marker = json.loads((engine_dir / "stackctl-engine.json").read_text())
    assert marker["kind"] == "cuda" and marker["bundle"]["lean"] and not marker["bundle"]["torch_bundled"]
    assert marker["host_python"] == str(python)
    # torch is the host's, vLLM the engine's own; the lean server imports.
    script = ("import json, torch, vllm, vllm.entrypoints.openai.api_server as server; "
              "print(json.dumps([torch.__file__, vllm.__file__, torch.version.cuda]))")
    ran = subprocess.run([str(info.python), "-c", script], capture_output=True, text=True, timeout=600, check=False,
                         env={**os.environ, **vllm_cuda_engine.environment(), **info.environment})
    assert ran.returncode == 0, ran.stderr[-3000:]
    torch_file, vllm_file, cuda = json.loads(ran.stdout.strip().splitlines()[-1])
    assert Path(torch_file).is_relative_to(python.parent.parent) and Path(vllm_file).is_relative_to(engine_dir)
    assert cuda == "13.0" and not any(engine_dir.glob("lib/python*/site-packages/torch"))


def test_the_engine_choice_finds_the_bundled_engine(offline_install, monkeypatch):
    from stackctl.runtime.native_engine import native_engine, serving_gpu_engine

    home, _done = offline_install
    monkeypatch.setenv("STACKCTL_HOME", str(home))
    config = parse_stack_config({"hardware": "generic", "model": "qwen3.6-27b"})
    found = serving_gpu_engine(config)
    assert found is not None and found.vllm_version == VLLM and found.environment
    assert native_engine(config).python == found.python


def test_installing_the_same_bundle_again_is_a_no_op_and_another_host_python_is_refused(
        offline_install, bundle, vllm_cuda_engine):
    home, _done = offline_install
    out, _printed = bundle
    env = {**vllm_cuda_engine.environment(), "STACKCTL_HOME": str(home)}
    marker = home / "engines" / f"vllm-cuda-{VLLM}" / "stackctl-engine.json"
    before = marker.stat().st_mtime_ns
    again = run_cli("install-engine", "--from", str(out), "--python", str(vllm_cuda_engine.info.python), cwd=home,
                    env=env, timeout=600)
    # The CUDA engine's own python has torch 2.13.0 too, so the bundle fits; the marker says it is there.
    assert again.returncode == 0, again.stderr
    assert marker.stat().st_mtime_ns == before
    # stackctl's own venv has no torch.
    refused = run_cli("install-engine", "--from", str(out), "--python", sys.executable, cwd=home, env=env, timeout=600)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    lines = [line for line in refused.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and f"reuses the host's torch {TORCH} (CUDA 13.0), but" in lines[0]
