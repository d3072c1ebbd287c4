"""The native GPU engine on a machine without a GPU: PyPI's vLLM CUDA build installed by the real
`stackctl install-engine --cuda` (the session fixture), what its marker records, that vLLM and its
CUDA torch import, and that a native GPU stack and its systemd unit run it."""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from stackctl.engine.gpu_install import installed_gpu_engine, plan_gpu_engine
from stackctl.engine.install import EngineInstallError
from stackctl.layout import StackLayout
from stackctl.profiles import MODEL_PROFILES
from stackctl.profiles.compat import table
from stackctl.stack import Stack
from stackctl.systemd_unit import render_unit
from tests.support.cli import run_cli

pytestmark = [pytest.mark.integration, pytest.mark.vllm_cuda]


def test_the_marker_records_the_pins_and_what_was_installed(vllm_cuda_engine):
    info = vllm_cuda_engine.info
    marker = json.loads((info.engine_dir / "stackctl-engine.json").read_text())
    pin = next(row for row in table().pypi_vllm if row.version == info.plan.vllm)
    assert marker["kind"] == "cuda" and marker["plan"]["vllm"] == pin.version == info.vllm_version
    assert marker["plan"]["torch"] == pin.torch and info.torch_version.startswith(pin.torch + "+cu")
    assert info.torch_cuda == pin.cuda  # a CUDA torch, never the local CPU wheel
    assert marker["venv_bytes"] > 5 * 10**9 and marker["wheelhouse"]


def test_vllm_and_its_cuda_torch_import_in_the_venv(vllm_cuda_engine):
    done = subprocess.run([str(vllm_cuda_engine.info.python), "-c",
                           "import json, torch, vllm; print(json.dumps([vllm.__version__, torch.version.cuda]))"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [vllm_cuda_engine.info.vllm_version,
                                                                 vllm_cuda_engine.info.torch_cuda]


def test_its_registry_knows_every_gpu_profiles_architecture(vllm_cuda_engine):
    wanted = sorted({model.architecture for model in MODEL_PROFILES.values() if model.architecture})
    script = ("import json; from vllm.model_executor.models.registry import ModelRegistry; "
              "print(json.dumps(sorted(ModelRegistry.get_supported_archs())))")
    done = subprocess.run([str(vllm_cuda_engine.info.python), "-c", script], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    known = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert set(wanted) <= known, set(wanted) - known


def test_installing_again_is_a_no_op_that_says_what_is_there(vllm_cuda_engine, tmp_path):
    marker = vllm_cuda_engine.info.engine_dir / "stackctl-engine.json"
    before = marker.stat().st_mtime_ns
    done = run_cli("install-engine", "--cuda", cwd=tmp_path, env={"STACKCTL_HOME": str(vllm_cuda_engine.home)},
                   timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"vLLM {vllm_cuda_engine.info.vllm_version} (torch {vllm_cuda_engine.info.torch_version}" in done.stdout
    assert marker.stat().st_mtime_ns == before
    assert installed_gpu_engine(vllm_cuda_engine.info.engine_dir) is not None


def test_a_native_gpu_stack_and_its_systemd_unit_run_that_engine(vllm_cuda_engine, tmp_path, monkeypatch):
    monkeypatch.setenv("STACKCTL_HOME", str(vllm_cuda_engine.home))
    (tmp_path / "stack.yaml").write_text(yaml.safe_dump({"hardware": "dgx-spark", "model": "qwen3.6-35b-a3b-fp8",
                                                         "runtime": "native"}))
    layout = StackLayout(tmp_path)
    stack = Stack.load(layout)
    vllm = next(service for service in stack.services if service.name == "vllm")
    assert vllm.native is not None and vllm.native.argv[0] == str(vllm_cuda_engine.info.python)
    unit = render_unit(layout, stack.runtime)
    assert "install-engine" in unit and "ExecStartPre" in unit and "pull" in unit


def test_a_driver_too_old_or_a_pin_that_cannot_serve_the_model_is_refused_with_the_fix():
    with pytest.raises(EngineInstallError, match="needs NVIDIA driver >= 580 \\(found 570\\).*nvidia-driver-580-open"):
        plan_gpu_engine("Qwen3_5ForConditionalGeneration", 570)
    with pytest.raises(EngineInstallError, match="not in stackctl's table of CUDA wheels"):
        plan_gpu_engine("Qwen3_5ForConditionalGeneration", 580, vllm_version="0.16.0")
