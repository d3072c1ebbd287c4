"""The GPU check's pieces: packed and split here, joined and verified there (checksums of every
piece and of the whole), and the vLLM wheel trimmed for Hopper still installs with pip."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools" / "gpu_check"))

import prepare
from run import Check


def test_pieces_join_back_into_the_same_files(tmp_path):
    source = tmp_path / "bundle"
    (source / "engine").mkdir(parents=True)
    payload = random.Random(0).randbytes(256 * 1024)  # what xz cannot squeeze
    (source / "engine" / "blob.bin").write_bytes(payload)
    (source / "session.json").write_text('{"turns": []}')
    prepare.pack(source, tmp_path / "pieces", 64 * 1024, {"what": "test"})
    manifest = json.loads((tmp_path / "pieces" / "manifest.json").read_text())
    assert len(manifest["pieces"]) >= 2 and all(piece["bytes"] <= 64 * 1024 for piece in manifest["pieces"])
    check = Check(tmp_path / "work", tmp_path / "pieces")
    result = check.phase_join()
    assert result["pieces"] == len(manifest["pieces"]) and result["contents"] == {"what": "test"}
    assert (tmp_path / "work" / "bundle" / "engine" / "blob.bin").read_bytes() == payload


def test_a_corrupted_or_missing_piece_is_named(tmp_path):
    source = tmp_path / "bundle"
    source.mkdir()
    (source / "data").write_bytes(random.Random(1).randbytes(96 * 1024))
    prepare.pack(source, tmp_path / "pieces", 32 * 1024, {})
    second = tmp_path / "pieces" / "part-01"
    second.write_bytes(b"x" + second.read_bytes()[1:])
    with pytest.raises(RuntimeError, match="piece part-01 is corrupted"):
        Check(tmp_path / "work", tmp_path / "pieces").phase_join()
    second.unlink()
    with pytest.raises(RuntimeError, match="piece part-01 is missing"):
        Check(tmp_path / "work2", tmp_path / "pieces").phase_join()


def make_wheel(path: Path, files: dict[str, bytes]) -> Path:
    """A real wheel (RECORD with hashes) holding `files` in package `demo`."""
    name = "demo-1.0.dist-info"
    files = {**files, f"{name}/METADATA": b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n",
             f"{name}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = []
    for file, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{file},sha256={digest},{len(data)}")
    record.append(f"{name}/RECORD,,")
    wheel = path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for file, data in files.items():
            archive.writestr(file, data)
        archive.writestr(f"{name}/RECORD", "\n".join(record) + "\n")
    return wheel


def test_a_trimmed_wheel_loses_just_those_files_and_still_installs(tmp_path):
    wheel = make_wheel(tmp_path, {"demo/__init__.py": b"VALUE = 1\n", "demo/fa2.so": b"\0" * 4096,
                                  "demo/third_party/fmha_sm100/kernel.h": b"// x\n"})
    dropped = prepare.trim_wheel(wheel, ("demo/fa2.so", "demo/third_party/fmha_sm100/*"))
    assert sorted(dropped) == ["demo/fa2.so", "demo/third_party/fmha_sm100/kernel.h"]
    with zipfile.ZipFile(wheel) as archive:
        assert all(info.compress_type == zipfile.ZIP_STORED for info in archive.infolist())
        record = archive.read("demo-1.0.dist-info/RECORD").decode()
    assert "fa2.so" not in record and "demo/__init__.py" in record
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(target),
                    str(wheel)], check=True)
    assert (target / "demo" / "__init__.py").read_text() == "VALUE = 1\n" and not (target / "demo" / "fa2.so").exists()
