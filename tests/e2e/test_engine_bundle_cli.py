"""`stackctl bundle engine` and `stackctl install-engine --from` refuse bad input with one line and
no traceback, before any download or install (the real CLI in a subprocess; no network used)."""

from __future__ import annotations

import sys

import pytest

from stackctl.engine.bundle import BundleTarget
from stackctl.engine.bundle_manifest import BundleInstall, BundleManifest, BundleTorch
from tests.support.cli import assert_one_line_error, run_cli

THIS_PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"


def write_bundle(directory, python="3.9", machine="x86_64"):
    directory.mkdir(parents=True, exist_ok=True)
    BundleManifest(format=1, created_by="stackctl test", vllm="0.24.0",
                   torch=BundleTorch(version="2.11.0", cuda="13.0", bundled=False), python=python, machine=machine,
                   platforms=tuple(BundleTarget(python, machine).platforms()), lean=True,
                   environment={"VLLM_USE_FLASHINFER_SAMPLER": "0"},
                   install=BundleInstall(no_deps=True, requirements=()), files=()).write(directory)
    return directory


@pytest.mark.parametrize("make, fragments", [
    (lambda tmp: tmp / "nowhere", ["no bundle at", "nowhere"]),
    (lambda tmp: (tmp / "empty").mkdir() or tmp / "empty", ["is not a stackctl engine bundle (no stackctl-bundle.json)"]),
    (lambda tmp: (tmp / "bad.tar").write_text("not a tar") and tmp / "bad.tar",
     ["is neither a bundle directory nor a tar archive"]),
    (lambda tmp: write_bundle(tmp / "py39"), [(f"this bundle is for Python 3.9, but {sys.executable} is Python "
                                              f"{THIS_PYTHON}"), "--python-version"]),
])
def test_install_engine_from_a_bad_or_foreign_bundle_says_what_differs_in_one_line(tmp_path, make, fragments):
    source = make(tmp_path)
    done = run_cli("install-engine", "--from", str(source), "--python", sys.executable, cwd=tmp_path,
                   env={"STACKCTL_HOME": str(tmp_path / "home")})
    assert_one_line_error(done, *fragments, code=1)
    assert not list((tmp_path / "home").glob("engines/vllm-cuda-*"))  # nothing installed


def test_install_engine_python_without_from_is_a_usage_error(tmp_path):
    done = run_cli("install-engine", "--python", sys.executable, cwd=tmp_path)
    assert_one_line_error(done, "--python goes with --from", code=2)


@pytest.mark.parametrize("args, fragments, code", [
    (["--vllm", "0.32.0", "--reuse-torch", "2.11.0"],
     ["vLLM 0.32.0 pins torch 2.13.0; --reuse-torch 2.11.0 cannot serve it: pick --vllm 0.20.0..0.26.0"], 1),
    (["--vllm", "0.99.0"], ["vLLM 0.99.0 is not in stackctl's table of CUDA wheels"], 1),
    (["--python-version", "3"], ["--python-version takes X.Y"], 2),
    (["--glibc", "two"], ["--glibc takes X.Y"], 2),
    (["--host-packages", "missing.txt"], ["cannot read --host-packages missing.txt"], 2),
])
def test_bundle_engine_refuses_bad_choices_before_resolving_anything(tmp_path, args, fragments, code):
    done = run_cli("bundle", "engine", *args, "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert_one_line_error(done, *fragments, code=code)
    assert not (tmp_path / "out").exists()


def test_bundle_engine_never_writes_into_a_directory_that_holds_something_else(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    done = run_cli("bundle", "engine", "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert_one_line_error(done, "is not empty and holds no bundle", code=1)
    assert (tmp_path / "out" / "notes.txt").read_text() == "mine"
