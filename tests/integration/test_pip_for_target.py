"""pip resolving for another host evaluates environment markers as that host would: the real pip,
run through stackctl.engine._pip_for_target, on hand-made wheels in a local directory (no index)."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from stackctl.engine.bundle import BundleTarget

pytestmark = pytest.mark.integration


def make_wheel(directory: Path, name: str, requires: list[str]) -> None:
    dist_info = f"{name}-1.0.dist-info"
    files = {
        f"{name}/__init__.py": b"",
        f"{dist_info}/METADATA": "\n".join(["Metadata-Version: 2.1", f"Name: {name}", "Version: 1.0",
                                            *(f"Requires-Dist: {item}" for item in requires)]).encode() + b"\n",
        f"{dist_info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
              f"{len(data)}" for path, data in files.items()]
    files[f"{dist_info}/RECORD"] = ("\n".join([*record, f"{dist_info}/RECORD,,"]) + "\n").encode()
    with zipfile.ZipFile(directory / f"{name}-1.0-py3-none-any.whl", "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)


def resolved_for(target: BundleTarget, wheels: Path, tmp_path: Path) -> tuple[set[str], dict]:
    report = tmp_path / f"report-{target.python}-{target.machine}.json"
    done = subprocess.run(
        [sys.executable, "-m", "stackctl.engine._pip_for_target", json.dumps(target.marker_environment()), "install",
         "--dry-run", "--ignore-installed", "--isolated", "--no-index", "--find-links", str(wheels), "--report",
         str(report), "--target", str(tmp_path / "target"), "--disable-pip-version-check", *target.pip_options(),
         "app"], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(report.read_text())
    return {item["metadata"]["name"] for item in data["install"]}, data["environment"]


def test_markers_are_the_target_s_not_this_interpreter_s(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    make_wheel(wheels, "app", ['oldpy; python_version < "3.12"', 'armonly; platform_machine == "aarch64"', "always"])
    for name in ("oldpy", "armonly", "always"):
        make_wheel(wheels, name, [])
    old_arm, environment = resolved_for(BundleTarget("3.10", "aarch64"), wheels, tmp_path)
    assert old_arm == {"app", "oldpy", "armonly", "always"}
    assert environment["python_version"] == "3.10" and environment["platform_machine"] == "aarch64"
    new_x86, environment = resolved_for(BundleTarget("3.13", "x86_64"), wheels, tmp_path)
    assert new_x86 == {"app", "always"} and environment["python_version"] == "3.13"
