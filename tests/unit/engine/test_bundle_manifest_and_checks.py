"""The bundle manifest, and every refusal of a bundle that does not match the host: Python,
machine, the wheels' manylinux tags, torch's release and CUDA, the host's packages, missing or
corrupted files. (No pip runs here; `probe_host_python` is exercised on this interpreter.)"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from stackctl.engine.bundle import BundleTarget, choose_vllm, parse_freeze
from stackctl.engine.bundle_graph import BundleError
from stackctl.engine.bundle_install import (
    HostPython,
    check_bundle_fits,
    probe_host_python,
    supported_tags,
)
from stackctl.engine.bundle_manifest import (
    MANIFEST_NAME,
    BundleFile,
    BundleHostPackage,
    BundleInstall,
    BundleManifest,
    BundleTorch,
    file_sha256,
    read_manifest,
    verify_files,
)

THIS_PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"
TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"


def wheel(directory: Path, name: str, body: bytes = b"wheel bytes") -> BundleFile:
    path = directory / name
    path.write_bytes(body)
    return BundleFile(name=name, package=name.split("-")[0], version=name.split("-")[1], sha256=file_sha256(path),
                      size=len(body))


def manifest(files=(), **changes) -> BundleManifest:
    fields = {"format": 1, "created_by": "stackctl test", "vllm": "0.24.0",
                  "torch": BundleTorch(version="2.11.0", cuda="13.0", bundled=False), "python": THIS_PYTHON,
                  "machine": "x86_64", "platforms": tuple(BundleTarget(THIS_PYTHON, "x86_64").platforms()), "lean": True,
                  "environment": {"VLLM_USE_FLASHINFER_SAMPLER": "0"},
                  "install": BundleInstall(no_deps=True, requirements=tuple(file.name for file in files)),
                  "files": tuple(files),
                  "host_packages": (BundleHostPackage(name="numpy", specifier=">=1.25,<2.4", version="2.3.5"),)}
    return BundleManifest(**{**fields, **changes})


def host(**changes) -> HostPython:
    fields = {"executable": Path("/opt/py/bin/python3"), "python": THIS_PYTHON, "machine": "x86_64",
                  "site_dirs": ("/opt/py/lib/site-packages",), "packages": {"numpy": "2.3.5"}, "torch_version": "2.11.0+cu130",
                  "torch_cuda": "13.0", "torch_site": "/opt/py/lib/site-packages"}
    return HostPython(**{**fields, **changes})


X86_TAGS = {f"{TAG}-{TAG}-manylinux_2_28_x86_64", "cp38-abi3-manylinux_2_28_x86_64", "py3-none-any"}
GOOD_WHEEL = "vllm-0.24.0-cp38-abi3-manylinux_2_28_x86_64.whl"


def test_the_manifest_round_trips_and_sums_its_files(tmp_path):
    files = [wheel(tmp_path, GOOD_WHEEL), wheel(tmp_path, "xgrammar-0.2.3-py3-none-any.whl", b"x" * 10)]
    written = manifest(files)
    written.write(tmp_path)
    read = read_manifest(tmp_path)
    assert read == written and read.total_bytes == len(b"wheel bytes") + 10
    data = json.loads((tmp_path / MANIFEST_NAME).read_text())
    assert {"format", "vllm", "torch", "python", "machine", "platforms", "lean", "environment", "install", "files",
            "host_packages", "left_out"} <= set(data)
    verify_files(tmp_path, read)  # intact: no error


@pytest.mark.parametrize("content, message", [
    (None, "is not a stackctl engine bundle (no stackctl-bundle.json)"),
    ("{not json", "cannot be read"),
    (json.dumps({"format": 7}), "is bundle format 7; this stackctl reads format 1"),
    (json.dumps({"format": 1, "vllm": "0.24.0"}), "is not a valid bundle manifest (created_by: Field required)"),
])
def test_a_missing_or_bad_manifest_is_refused_in_one_line(tmp_path, content, message):
    if content is not None:
        (tmp_path / MANIFEST_NAME).write_text(content)
    with pytest.raises(BundleError, match=message.replace("(", r"\(").replace(")", r"\)")) as caught:
        read_manifest(tmp_path)
    assert "\n" not in str(caught.value)


def test_a_missing_or_corrupted_file_is_refused(tmp_path):
    files = [wheel(tmp_path, GOOD_WHEEL), wheel(tmp_path, "xgrammar-0.2.3-py3-none-any.whl")]
    bundle = manifest(files)
    (tmp_path / "xgrammar-0.2.3-py3-none-any.whl").unlink()
    with pytest.raises(BundleError, match="lacks xgrammar-0.2.3-py3-none-any.whl: copy the whole bundle again"):
        verify_files(tmp_path, bundle)
    wheel(tmp_path, "xgrammar-0.2.3-py3-none-any.whl", b"wheel bytez")  # same size, one byte flipped
    with pytest.raises(BundleError, match="xgrammar-0.2.3-py3-none-any.whl .* is corrupted .*sha256"):
        verify_files(tmp_path, bundle)


def test_a_bundle_for_this_host_passes_every_check(tmp_path):
    check_bundle_fits(manifest([wheel(tmp_path, GOOD_WHEEL)]), host(), X86_TAGS)


@pytest.mark.parametrize("changes, tags, message", [
    ({"python": "3.9"}, None, f"this bundle is for Python {THIS_PYTHON}, but /opt/py/bin/python3 is Python 3.9"),
    ({"machine": "aarch64"}, None, "this bundle is for x86_64, but this host is aarch64: make it with --machine aarch64"),
    ({}, {"py3-none-any"}, "is built for manylinux_2_28_x86_64, which this host .* cannot install: .*--glibc"),
    ({"torch_version": None, "torch_cuda": None, "torch_error": "ModuleNotFoundError: No module named 'torch'"}, None,
     "reuses the host's torch 2.11.0 \\(CUDA 13.0\\), but /opt/py/bin/python3 has no torch \\(ModuleNotFoundError"),
    ({"torch_version": "2.13.0+cu130"}, None, "reuses torch 2.11.0, but /opt/py/bin/python3 has torch 2.13.0\\+cu130"),
    ({"torch_cuda": "12.8"}, None, "torch 2.11.0 built for CUDA 13.0, but .*torch 2.11.0\\+cu130 is built for CUDA 12.8"),
    ({"torch_version": "2.11.0+cpu", "torch_cuda": None}, None, "is built for no CUDA \\(a CPU build\\)"),
    ({"packages": {}}, None, "counts on the host's numpy \\(>=1.25,<2.4.*lacks numpy: .*pip list --format=freeze"),
    ({"packages": {"numpy": "1.24.0"}}, None, "counts on the host's numpy .* has numpy 1.24.0"),
])
def test_a_bundle_that_does_not_match_the_host_is_refused_saying_what_differs(tmp_path, changes, tags, message):
    bundle = manifest([wheel(tmp_path, GOOD_WHEEL)])
    with pytest.raises(BundleError, match=message) as caught:
        check_bundle_fits(bundle, host(**changes), tags or X86_TAGS)
    assert "\n" not in str(caught.value)


def test_a_bundle_with_its_own_torch_does_not_look_at_the_host_s(tmp_path):
    bundle = manifest([wheel(tmp_path, GOOD_WHEEL)], torch=BundleTorch(version="2.11.0", cuda="13.0", bundled=True))
    check_bundle_fits(bundle, host(torch_version=None, torch_cuda=None), X86_TAGS)


def test_the_probe_reads_python_machine_packages_and_site_of_a_real_interpreter():
    bundle = manifest([], host_packages=(BundleHostPackage(name="PyYAML", specifier="", version="6.0"),),
                      torch=BundleTorch(version="2.11.0", cuda="13.0", bundled=False))
    found = probe_host_python(Path(sys.executable), bundle)
    assert found.python == THIS_PYTHON and found.machine
    assert "pyyaml" in found.packages and found.site_dirs
    assert any(Path(entry).name in ("site-packages", "dist-packages") for entry in found.site_dirs)
    assert not any(entry.endswith("lib-dynload") for entry in found.site_dirs)
    # stackctl's own venv has no torch: the probe says why instead of failing.
    assert found.torch_version is None and "torch" in (found.torch_error or "")


def test_a_python_that_is_not_one_is_refused_in_one_line(tmp_path):
    with pytest.raises(BundleError, match="cannot be run"):
        probe_host_python(tmp_path / "no-python", manifest([]))
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\necho 'not python' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(BundleError, match="is not a Python stackctl can use \\(not python\\)"):
        probe_host_python(fake, manifest([]))


def test_this_machine_s_tags_include_its_manylinux_and_pure_python():
    tags = supported_tags(THIS_PYTHON)
    assert "py3-none-any" in tags and any("manylinux" in tag for tag in tags)


def test_the_target_s_platform_tags_and_markers():
    target = BundleTarget("3.12", "aarch64", "2.35")
    assert target.platforms()[0] == "manylinux_2_35_aarch64" and "manylinux_2_17_aarch64" in target.platforms()
    assert target.platforms()[-1] == "manylinux2014_aarch64"
    environment = target.marker_environment()
    assert environment["python_version"] == "3.12" and environment["platform_machine"] == "aarch64"
    assert environment["sys_platform"] == "linux" and environment["implementation_name"] == "cpython"


def test_choosing_the_vllm_release_to_bundle():
    assert choose_vllm(None, None, None).version == "0.32.0"  # as install-engine
    assert choose_vllm(None, "2.11.0", None).version == "0.26.0"  # the newest that pins the host's torch
    assert choose_vllm("0.24.0", "2.11.0", None).torch == "2.11.0"
    with pytest.raises(BundleError, match="vLLM 0.32.0 pins torch 2.13.0; --reuse-torch 2.11.0 cannot serve it: "
                                          "pick --vllm 0.20.0..0.26.0 or bundle torch"):
        choose_vllm("0.32.0", "2.11.0", None)
    with pytest.raises(BundleError, match="no vLLM in the table pins torch 2.12.0"):
        choose_vllm(None, "2.12.0", None)
    with pytest.raises(Exception, match="not in stackctl's table of CUDA wheels"):
        choose_vllm("0.99.0", None, None)


def test_a_freeze_list_is_read_as_canonical_names():
    text = "# a comment\nPyYAML==6.0.3\ntorch==2.11.0+cu130\n-e git+https://x/y#egg=z\nfoo @ file:///tmp/foo.whl\n"
    assert parse_freeze(text, "host.txt") == {"pyyaml": "6.0.3", "torch": "2.11.0+cu130"}
    with pytest.raises(BundleError, match="host.txt line 2 is not `name==version`"):
        parse_freeze("numpy==2.3.5\nnumpy>=2\n", "host.txt")
