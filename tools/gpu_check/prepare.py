"""The GPU check's pieces, built here from the registries (never committed): everything a GPU host
without network needs, packed into pieces of at most --piece-mib MiB (the device tool carries
64 MiB a call, the repository included: with ~1,900 files it takes ~5.5 MiB of that, so 59 MiB
pieces no longer fit beside it).

    .venv/bin/python tools/gpu_check/prepare.py [--out .gpu-check] [--piece-mib 52]

What goes in (one tar.xz, split):
- engine/: `stackctl bundle engine --vllm 0.24.0 --reuse-torch 2.11.0 --lean --host-packages
  tools/gpu_check/h100-host-packages.txt` for the host's Python 3.12 (x86_64), with the vLLM wheel
  trimmed for Hopper: FlashAttention 2's kernel (FA3 serves sm_90), the vllm-rs binary, the
  Blackwell-only FMHA sources and DeepGEMM builds for other Pythons are left out;
- stackctl/: stackctl's own wheel, and the wheels of its dependencies and of the anthropic and
  openai SDKs that the host lacks (resolved here against the host's package versions);
- debs/: Debian's nginx, Prometheus and node-exporter (unpacked there with dpkg-deb -x);
- session.json: a real Claude Code session recorded here (tools/gpu_check/session.py record).

Then on the GPU host: `python3 tools/gpu_check/run.py start --pieces DIR` (see run.py).
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser() / "stackctl-gpu-check"
HOST_PACKAGES = HERE / "h100-host-packages.txt"
PYTHON_VERSION = "3.12"
GLIBC = "2.39"  # Ubuntu 24.04's
PLATFORMS = ("manylinux_2_39_x86_64", "manylinux_2_35_x86_64", "manylinux_2_34_x86_64", "manylinux_2_31_x86_64",
             "manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_24_x86_64", "manylinux_2_17_x86_64",
             "manylinux2014_x86_64", "manylinux1_x86_64", "linux_x86_64")
DEBS = ("nginx", "nginx-common", "prometheus", "prometheus-node-exporter")
# What an H100 (sm_90) never loads from vLLM's wheel; the rest of the wheel is kept whole.
HOPPER_TRIM = (
    "vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so",  # FlashAttention 2: FA3 serves Hopper
    "vllm/vllm-rs",  # the Rust frontend binary; the check runs vLLM's Python API server
    "vllm/third_party/fmha_sm100/*",  # Blackwell (sm_100) FMHA sources
    "vllm/third_party/deep_gemm/_C.cpython-31[01345]-*",  # DeepGEMM for other Pythons than the host's 3.12
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=REPO / ".gpu-check")
    parser.add_argument("--piece-mib", type=int, default=52)
    parser.add_argument("--vllm", default="0.24.0")
    parser.add_argument("--reuse-torch", default="2.11.0")
    parser.add_argument("--session", type=Path, help="a recording to reuse instead of recording one")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as scratch:
        work = Path(scratch) / "bundle"
        work.mkdir()
        contents = {
            "engine": bundle_engine(work / "engine", options.vllm, options.reuse_torch),
            "stackctl": stackctl_wheels(work / "stackctl"),
            "debs": debs(work / "debs"),
            "session": session(work / "session.json", options.session),
        }
        pack(work, options.out, options.piece_mib * 1024 * 1024, contents)


def bundle_engine(out: Path, vllm: str, torch: str) -> dict:
    run([sys.executable, "-m", "stackctl", "bundle", "engine", "--vllm", vllm, "--reuse-torch", torch,
         "--python-version", PYTHON_VERSION, "--machine", "x86_64", "--glibc", GLIBC, "--lean",
         "--host-packages", str(HOST_PACKAGES),
         "--out", str(out)])
    wheel = next(out.glob(f"vllm-{vllm}-*.whl"))
    dropped = trim_wheel(wheel, HOPPER_TRIM)
    refresh_manifest_entry(out, wheel)
    return {"vllm": vllm, "reused_torch": torch, "trimmed": {"patterns": list(HOPPER_TRIM), "files": len(dropped)},
            "wheels": sorted(path.name for path in out.glob("*.whl"))}


def trim_wheel(wheel: Path, patterns: tuple[str, ...]) -> list[str]:
    """Rewrite `wheel` without the files matching `patterns` (and their RECORD lines), stored
    uncompressed: the pieces' xz compresses better than zip's deflate."""
    trimmed = wheel.with_suffix(".trimmed")
    dropped = []
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(trimmed, "w", zipfile.ZIP_STORED) as target:
        record_name = next(name for name in source.namelist() if name.endswith(".dist-info/RECORD"))
        for info in source.infolist():
            if any(fnmatch.fnmatch(info.filename, pattern) for pattern in patterns):
                dropped.append(info.filename)
                continue
            if info.filename == record_name:
                continue
            target.writestr(info, source.read(info), compress_type=zipfile.ZIP_STORED)
        gone = set(dropped)
        record = "".join(line + "\n" for line in source.read(record_name).decode().splitlines()
                         if line.split(",", 1)[0] not in gone)
        target.writestr(record_name, record, compress_type=zipfile.ZIP_STORED)
    trimmed.replace(wheel)
    return dropped


def refresh_manifest_entry(bundle: Path, wheel: Path) -> None:
    """The bundle's manifest names every file with its checksum: the trimmed wheel's, now."""
    manifest_file = bundle / "stackctl-bundle.json"
    manifest = json.loads(manifest_file.read_text())
    data = wheel.read_bytes()
    for entry in manifest["files"]:
        if entry["name"] == wheel.name:
            entry.update(sha256=hashlib.sha256(data).hexdigest(), size=len(data))
    manifest_file.write_text(json.dumps(manifest, indent=2) + "\n")


def stackctl_wheels(out: Path) -> dict:
    """stackctl's wheel, and the wheels the host lacks for it and the SDK clients: resolved here
    with the host's own versions as constraints, so what the host has is kept and left out."""
    out.mkdir(parents=True)
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(REPO)])
    own = next(out.glob("stackctl-*.whl"))
    host = host_versions()
    constraints = out.parent / "host-constraints.txt"
    constraints.write_text("".join(f"{name}=={version}\n" for name, version in host.items() if name != "stackctl"))
    platform_args = [argument for platform in PLATFORMS for argument in ("--platform", platform)]
    report = out.parent / "stackctl-report.json"
    run([sys.executable, "-m", "pip", "install", "-q", "--dry-run", "--ignore-installed", "--report", str(report),
         "--only-binary=:all:", "--python-version", PYTHON_VERSION, "--implementation", "cp", *platform_args,
         "--target", str(out.parent / "resolve-target"), "-c", str(constraints), str(own), "anthropic", "openai"])
    wanted = []
    for item in json.loads(report.read_text())["install"]:
        name, version = normalize(item["metadata"]["name"]), item["metadata"]["version"]
        if name != "stackctl" and host.get(name) != version:
            wanted.append(f"{name}=={version}")
    run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "--python-version",
         PYTHON_VERSION, "--implementation", "cp", *platform_args, "--dest", str(out), *wanted])
    constraints.unlink()
    report.unlink()
    return {"wheels": sorted(path.name for path in out.glob("*.whl"))}


def host_versions() -> dict[str, str]:
    pairs = (line.strip().split("==", 1) for line in HOST_PACKAGES.read_text().splitlines()
             if "==" in line and not line.startswith("#"))
    return {normalize(name): version for name, version in pairs}


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def debs(out: Path) -> dict:
    out.mkdir(parents=True)
    run(["apt-get", "download", *DEBS], cwd=out)
    return {"debs": sorted(path.name for path in out.glob("*.deb"))}


def session(out: Path, reuse: Path | None) -> dict:
    if reuse is None:
        run([sys.executable, str(HERE / "session.py"), "record", str(out)])
    else:
        shutil.copy(reuse, out)
    recorded = json.loads(out.read_text())
    return {"client": recorded["client"], "turns": [turn["label"] for turn in recorded["turns"]]}


def pack(work: Path, out: Path, piece_bytes: int, contents: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for old in [*out.glob("part-*"), out / "manifest.json"]:  # the last pieces (an older proxy beside them stays)
        old.unlink(missing_ok=True)
    archive = out / "gpu-check.tar.xz"
    with open(archive, "wb") as target:
        tar = subprocess.Popen(["tar", "-cf", "-", "-C", str(work), "."], stdout=subprocess.PIPE)
        subprocess.run(["xz", "-T0", "-9", "-c"], stdin=tar.stdout, stdout=target, check=True)
        if tar.wait() != 0:
            raise SystemExit("tar failed")
    data = archive.read_bytes()
    archive.unlink()
    pieces = []
    for index in range(0, len(data), piece_bytes):
        name = f"part-{index // piece_bytes:02d}"
        chunk = data[index:index + piece_bytes]
        (out / name).write_bytes(chunk)
        pieces.append({"name": name, "bytes": len(chunk), "sha256": hashlib.sha256(chunk).hexdigest()})
    manifest = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(), "pieces": pieces,
                "contents": contents}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"{len(pieces)} piece(s), {len(data) / 2**20:.1f} MiB in all, in {out}:")
    for piece in pieces:
        print(f"  {piece['name']}  {piece['bytes'] / 2**20:.1f} MiB  {piece['sha256'][:16]}")


def run(argv: list[str], cwd: Path | None = None) -> None:
    print("$", " ".join(argv), flush=True)
    done = subprocess.run(argv, cwd=cwd, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{argv[0]} {argv[1] if len(argv) > 1 else ''} failed (exit {done.returncode})")


if __name__ == "__main__":
    main()
