"""Images the Compose tests need and no registry here can give: built locally, once per key.

- a Debian bookworm base with Python (debootstrap, then `docker import`), carrying this host's CA
  bundle and its local wheels (pip's find-links), so builds from it reach PyPI as the host does;
- stand-ins for prom/prometheus, prom/node-exporter and nginx built from Debian's packages,
  selected through stack.yaml's `images:` exactly as an air-gapped site would select its mirror.

Each tag is a hash of what goes into the image, so a changed Dockerfile or base is a new build and
an unchanged one is reused from the engine's (cached) data root.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from stackctl.errors import StackError

SUITE = "bookworm"
PACKAGES = ("python3", "python3-venv", "ca-certificates")
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
STAND_INS_DIR = Path(__file__).parent / "images"
STAND_INS = ("prometheus", "node-exporter", "nginx")
BUILD_TIMEOUT_S = 1200


@dataclass(frozen=True)
class LocalImages:
    base: str  # the Python base, for build_args.BASE_IMAGE
    stand_ins: dict[str, str]  # service -> image, for stack.yaml's images:
    # Build arguments a stack needs to build stackctl's own images from `base` here.
    build_args: dict[str, str]


def prepare_local_images(work_dir: Path) -> LocalImages:
    base = _base_image(work_dir)
    stand_ins = {name: _stand_in(name, base, work_dir) for name in STAND_INS}
    build_args = {"BASE_IMAGE": base}
    if _local_wheel_dirs():
        # The base's pip finds torch's CPU build among the host's local wheels; PyTorch's own
        # index (the Dockerfile's default) is out of reach here.
        build_args["TORCH_INDEX_URL"] = ""
    return LocalImages(base, stand_ins, build_args)


def image_exists(reference: str) -> bool:
    return subprocess.run(["docker", "image", "inspect", reference], capture_output=True, check=False).returncode == 0


def _base_image(work_dir: Path) -> str:
    mirror = _debian_mirror()
    wheels = sorted(path for directory in _local_wheel_dirs() for path in directory.glob("*.whl"))
    key = hashlib.sha256()
    for part in (SUITE, mirror, *PACKAGES, *(f"{path.name}:{path.stat().st_size}" for path in wheels)):
        key.update(f"{part}\0".encode())
    key.update(CA_BUNDLE.read_bytes() if CA_BUNDLE.exists() else b"")
    reference = f"stackctl-test/{SUITE}-python:{key.hexdigest()[:12]}"
    if image_exists(reference):
        return reference
    if shutil.which("debootstrap") is None:
        raise StackError("debootstrap is not installed: run scripts/setup")
    root = Path(tempfile.mkdtemp(prefix="rootfs-", dir=work_dir))
    try:
        _run(["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", SUITE, str(root), mirror],
             "debootstrap of the test base image")
        if CA_BUNDLE.exists():
            shutil.copyfile(CA_BUNDLE, root / CA_BUNDLE.relative_to("/"))
        if wheels:
            target = root / "opt/wheels"
            target.mkdir(parents=True)
            for wheel in wheels:
                shutil.copyfile(wheel, target / wheel.name)
            (root / "etc/pip.conf").write_text("[global]\nfind-links = /opt/wheels\n")
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for path in (root / junk).glob("*"):
                if path.is_file():
                    path.unlink()
        tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
        imported = subprocess.run(["docker", "import", "-", reference], stdin=tar.stdout, capture_output=True,
                                  text=True, check=False)
        tar.wait()
        if imported.returncode != 0:
            raise StackError(f"docker import of the test base failed: {imported.stderr.strip()}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return reference


def _stand_in(name: str, base: str, work_dir: Path) -> str:
    context = STAND_INS_DIR / name
    key = hashlib.sha256((context / "Dockerfile").read_bytes() + base.encode()).hexdigest()[:12]
    reference = f"stackctl-test/{name}:{key}"
    if image_exists(reference):
        return reference
    compose_file = work_dir / f"build-{name}.yml"
    compose_file.write_text(yaml.safe_dump({
        "name": "stackctl-test-images",
        "services": {name: {"image": reference, "build": {
            "context": str(context), "network": "host", "args": {"BASE_IMAGE": base}}}},
    }))
    _run(["docker", "compose", "-f", str(compose_file), "build", "--progress", "plain", name], f"building {reference}")
    return reference


def _debian_mirror() -> str:
    """The Debian mirror this host's apt uses (debootstrap must reach the same one)."""
    sources = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for path in sources:
        text = path.read_text(errors="replace") if path.is_file() else ""
        match = re.search(r"^URIs:\s*(\S+/debian)/?\s*$", text, re.MULTILINE) or re.search(
            r"^deb\s+(?:\[[^]]*\]\s+)?(\S+/debian)/?\s+\S+", text, re.MULTILINE)
        if match:
            return match.group(1)
    return "http://deb.debian.org/debian"


def _local_wheel_dirs() -> list[Path]:
    """pip's find-links directories on this host (where torch's CPU build lies here)."""
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=False)
    values = re.findall(r"find-links='([^']*)'", listed.stdout) + [os.environ.get("PIP_FIND_LINKS", "")]
    directories: list[Path] = []
    for raw in " ".join(values).split():
        path = Path(raw.removeprefix("file://"))
        if path.is_dir() and path not in directories:
            directories.append(path)
    return directories


def _run(argv: list[str], what: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-20:])
        raise StackError(f"{what} failed (exit {done.returncode}):\n{tail}")
