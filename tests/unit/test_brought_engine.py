"""Bring your own engine: `engine: {python: ...}` in stack.yaml is the interpreter the native vLLM
runs, the environment it needs reaches it, and doctor asks that interpreter (a real one) what it
holds before anything starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from stackctl.config import parse_stack_config
from stackctl.doctor.engine import check_engine
from stackctl.doctor.result import Status
from stackctl.engine.gpu_install import write_marker
from stackctl.errors import ConfigError
from stackctl.runtime.native_engine import native_engine
from tests.support.fakehost import context, make_host
from tests.support.stack_builder import make_stack


def venv_with_vllm(where: Path, version: str | None) -> Path:
    """A real interpreter whose installed-package metadata says vLLM `version` (None: no vLLM).
    Only the metadata is there: the shallow check reads metadata and imports nothing."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    if version is not None:
        site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              check=True, capture_output=True, text=True).stdout.strip()
        info = Path(site) / f"vllm-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}\n")
    return python


def test_engine_python_must_name_something():
    with pytest.raises(ConfigError, match="engine.python: give the engine's interpreter"):
        parse_stack_config({"engine": {"python": " "}})
    with pytest.raises(ConfigError, match="unknown key 'engine.venv'; allowed keys here: python"):
        parse_stack_config({"engine": {"venv": "/opt"}})


def test_the_named_interpreter_runs_vllm_with_the_environment_its_install_recorded(tmp_path, monkeypatch):
    monkeypatch.setenv("STACKCTL_HOME", str(tmp_path / "home"))
    python = venv_with_vllm(tmp_path / "vllm-env", "0.24.0")
    # An engine venv of stackctl's (a lean bundle's install) records what the engine needs.
    write_marker(tmp_path / "vllm-env", {
        "kind": "cuda", "vllm_version": "0.24.0", "torch_version": "2.11.0+cu130", "torch_cuda": "13.0",
        "plan": {"vllm": "0.24.0", "torch": "2.11.0", "cuda": "13.0", "machine": "x86_64", "reason": "a bundle"},
        "environment": {"VLLM_USE_FLASHINFER_SAMPLER": "0"}})
    stack = make_stack(tmp_path, runtime="native", hardware="generic", model="qwen3.6-27b",
                       engine={"python": str(python)}, vllm={"environment": {"VLLM_LOGGING_LEVEL": "DEBUG"}})
    engine = native_engine(stack.config)
    assert engine.brought and engine.python == python and engine.origin == "engine.python in stack.yaml"
    vllm = next(service for service in stack.services if service.name == "vllm")
    assert vllm.native is not None and vllm.native.argv[0] == str(python)
    environment = vllm.compose["environment"]
    assert "VLLM_USE_FLASHINFER_SAMPLER=0" in environment and "VLLM_LOGGING_LEVEL=DEBUG" in environment
    in_use = stack.runtime.engine_in_use(stack.services)
    assert in_use is not None and (in_use.what, in_use.where) == ("vLLM 0.24.0", str(python))


def test_a_compose_stack_keeps_its_image_whatever_engine_python_says(tmp_path):
    stack = make_stack(tmp_path, runtime="compose", hardware="generic", engine={"python": "/opt/vllm/bin/python"})
    vllm = next(service for service in stack.services if service.name == "vllm")
    assert vllm.compose["image"].startswith("nvcr.io/nvidia/vllm:")
    in_use = stack.runtime.engine_in_use(stack.services)
    assert in_use is not None and in_use.where == "image" and in_use.origin == "stackctl's default for the model"


@pytest.mark.parametrize(("version", "status", "words"), [
    ("0.24.0", Status.ok, "vLLM 0.24.0"),
    ("0.10.2", Status.fail, "predates Qwen3_5ForConditionalGeneration (served from vLLM 0.17.0)"),
    (None, Status.fail, "vLLM is not installed there"),
])
def test_doctor_reads_the_brought_engine_before_anything_starts(tmp_path, version, status, words):
    python = venv_with_vllm(tmp_path / "vllm-env", version)
    stack = make_stack(tmp_path, runtime="native", hardware="generic", model="qwen3.6-27b",
                       engine={"python": str(python)})
    result = check_engine(context(stack, make_host(tmp_path)))
    assert result.status is status and words in result.found + result.fix, result
    assert str(python) in result.found


def test_doctor_names_a_missing_interpreter_and_the_fix(tmp_path):
    stack = make_stack(tmp_path, runtime="native", hardware="generic", engine={"python": str(tmp_path / "nope/python")})
    result = check_engine(context(stack, make_host(tmp_path)))
    assert result.status is Status.fail and "does not exist" in result.found
    assert "point engine.python in stack.yaml at the python of an environment that has vLLM" in result.fix
