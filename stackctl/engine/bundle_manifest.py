"""`stackctl-bundle.json`: what an engine bundle holds and the host it is for.

Written by `stackctl bundle engine`, read by `stackctl install-engine --from`, which installs
nothing unless every file is there with its recorded size and sha256.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from stackctl.engine.bundle_graph import BundleError

MANIFEST_NAME = "stackctl-bundle.json"
FORMAT_VERSION = 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BundleTorch(_Model):
    version: str  # the release vLLM pins (2.11.0)
    cuda: str  # the CUDA that release is built with (13.0)
    bundled: bool  # False: the host's torch is reused, and must be this release and CUDA


class BundleFile(_Model):
    name: str  # the wheel's file name, in the bundle's directory
    package: str
    version: str
    sha256: str
    size: int


class BundleHostPackage(_Model):
    """A package left out because the host's `pip list` had it; install-engine checks it is there."""

    name: str
    specifier: str  # what the bundle's packages accept of it
    version: str  # what the host listed


class BundleLeftOut(_Model):
    name: str
    version: str
    reason: str


class BundleInstall(_Model):
    no_deps: bool  # lean bundles: pip must not resolve (vLLM's metadata names what is left out)
    requirements: tuple[str, ...]  # pip arguments: requirement strings, or file names (no_deps)


class BundleManifest(_Model):
    format: Literal[1]
    created_by: str
    vllm: str
    torch: BundleTorch
    python: str  # the target's X.Y
    machine: str  # x86_64 | aarch64
    platforms: tuple[str, ...]  # the wheel platform tags the bundle was resolved for
    lean: bool
    environment: dict[str, str]  # what the engine's process needs (VLLM_USE_FLASHINFER_SAMPLER=0)
    install: BundleInstall
    files: tuple[BundleFile, ...]
    host_packages: tuple[BundleHostPackage, ...] = ()
    left_out: tuple[BundleLeftOut, ...] = ()

    @property
    def total_bytes(self) -> int:
        return sum(file.size for file in self.files)

    def write(self, directory: Path) -> Path:
        path = Path(directory) / MANIFEST_NAME
        path.write_text(json.dumps(self.model_dump(mode="json"), indent=2) + "\n")
        return path


def read_manifest(directory: Path) -> BundleManifest:
    """The manifest of the bundle in `directory`, or a BundleError that says what is wrong."""
    path = Path(directory) / MANIFEST_NAME
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise BundleError(f"{directory} is not a stackctl engine bundle (no {MANIFEST_NAME}): pass the directory "
                          "`stackctl bundle engine --out` wrote, or its .tar") from None
    except (OSError, ValueError) as exc:
        raise BundleError(f"{path} cannot be read ({exc}): copy the bundle again") from None
    if isinstance(data, dict) and data.get("format") != FORMAT_VERSION:
        raise BundleError(f"{path} is bundle format {data.get('format')!r}; this stackctl reads format "
                          f"{FORMAT_VERSION}: make the bundle with the same stackctl version")
    try:
        return BundleManifest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise BundleError(f"{path} is not a valid bundle manifest ({where}: {first['msg']}): "
                          "copy the bundle again") from None


def verify_files(directory: Path, manifest: BundleManifest) -> None:
    """Every file the manifest lists is there, at its size and sha256; else one BundleError."""
    missing = [file.name for file in manifest.files if not (Path(directory) / file.name).is_file()]
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise BundleError(f"the bundle in {directory} lacks {missing[0]}{more}: copy the whole bundle again")
    for file in manifest.files:
        path = Path(directory) / file.name
        if path.stat().st_size != file.size or file_sha256(path) != file.sha256:
            raise BundleError(f"{file.name} in {directory} is corrupted (its sha256 differs from the manifest's): "
                              "copy it again")


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
