"""Which engine serves which model on which GPU and driver, from the table in compat.yaml.

Answers three questions with one set of facts: the NGC image a fresh stack renders (the newest
tag that serves the model on the profile's GPU), whether a given image or installed engine is
too old for the model or too new for the host's driver (doctor), and which PyPI vLLM a native
GPU engine pins (install-engine).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict

NGC_VLLM_REPOSITORY = "nvcr.io/nvidia/vllm"
_TABLE = Path(__file__).with_name("compat.yaml")
_NGC_REFERENCE = re.compile(r"^nvcr\.io/nvidia/vllm:(?P<tag>\d{2}\.\d{2}(?:\.post\d+)?)(?:-py3)?$")


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CudaDriver(_Row):
    cuda: str
    min_driver: int


class GpuCuda(_Row):
    sm: str
    min_cuda: str


class NgcImage(_Row):
    tag: str
    vllm: str
    cuda: str
    source: str

    @property
    def reference(self) -> str:
        return ngc_reference(self.tag)


class NgcCudaEra(_Row):
    since: str
    cuda: str


class PypiVllm(_Row):
    version: str
    torch: str
    cuda: str


class Architecture(_Row):
    name: str
    vllm: str
    source: str


class CompatTable(_Row):
    cuda_drivers: tuple[CudaDriver, ...]
    gpu_cuda: tuple[GpuCuda, ...]
    ngc_images: tuple[NgcImage, ...]
    ngc_cuda_eras: tuple[NgcCudaEra, ...]
    pypi_vllm: tuple[PypiVllm, ...]
    architectures: tuple[Architecture, ...]


@dataclass(frozen=True)
class ImageFacts:
    """What the table says of one NGC tag (listed, or placed between listed neighbours)."""

    tag: str
    cuda: str
    # vLLM in the image: exact when listed; otherwise the range its neighbours bound.
    vllm_at_least: str | None
    vllm_at_most: str | None

    @property
    def exact_vllm(self) -> str | None:
        return self.vllm_at_least if self.vllm_at_least == self.vllm_at_most else None


@cache
def table() -> CompatTable:
    return CompatTable.model_validate(yaml.safe_load(_TABLE.read_text()))


def version(text: str) -> Version:
    return Version(text)


def ngc_reference(tag: str) -> str:
    return f"{NGC_VLLM_REPOSITORY}:{tag}-py3"


def ngc_tag(image: str) -> str | None:
    """The release tag of an NGC vLLM image reference (None for any other image)."""
    match = _NGC_REFERENCE.match(image.split("@", 1)[0])
    return match.group("tag") if match else None


def architecture_floor(architecture: str | None) -> Architecture | None:
    """The first vLLM that serves `architecture` (None: not in the table)."""
    return next((row for row in table().architectures if row.name == architecture), None)


def min_driver(cuda: str) -> int:
    """The oldest driver that runs code built with `cuda` (minor version compatibility)."""
    rows = [row for row in table().cuda_drivers if version(row.cuda) <= version(cuda)]
    if not rows:
        return min(row.min_driver for row in table().cuda_drivers)
    return max(rows, key=lambda row: version(row.cuda)).min_driver


def cuda_serves_gpu(cuda: str, sm: str | None) -> bool:
    if sm is None:
        return True
    row = next((row for row in table().gpu_cuda if row.sm == sm), None)
    return row is None or version(cuda) >= version(row.min_cuda)


def image_facts(image: str) -> ImageFacts | None:
    """The table's facts for an NGC vLLM image; None when it is not one (or its tag is odd)."""
    tag = ngc_tag(image)
    if tag is None:
        return None
    try:
        wanted = version(tag)
    except InvalidVersion:
        return None
    rows = sorted(table().ngc_images, key=lambda row: version(row.tag))
    for row in rows:
        if version(row.tag) == wanted:
            return ImageFacts(tag, row.cuda, row.vllm, row.vllm)
    older = [row for row in rows if version(row.tag) < wanted]
    newer = [row for row in rows if version(row.tag) > wanted]
    eras = [era for era in table().ngc_cuda_eras if version(era.since) <= wanted]
    cuda = max(eras, key=lambda era: version(era.since)).cuda if eras else "12.0"
    return ImageFacts(
        tag,
        cuda,
        vllm_at_least=older[-1].vllm if older else None,
        vllm_at_most=newer[0].vllm if newer else None,
    )


@dataclass(frozen=True)
class Verdict:
    """Does an engine serve a model on a host? `ok` None means the table cannot tell."""

    ok: bool | None
    reason: str


def engine_serves(vllm_version: str | None, architecture: str | None, *,
                  at_least: str | None = None, at_most: str | None = None) -> Verdict:
    """Is vLLM `vllm_version` (or, when unknown exactly, a vLLM between `at_least` and
    `at_most`) new enough for `architecture`?"""
    floor = architecture_floor(architecture)
    if floor is None:
        return Verdict(None, f"{architecture or 'the architecture'} is not in stackctl's table (no known first vLLM)")
    if vllm_version is not None:
        if _base(vllm_version) >= version(floor.vllm):
            return Verdict(True, f"vLLM {vllm_version} >= {floor.vllm}, the first to serve {floor.name}")
        return Verdict(False, f"vLLM {vllm_version} predates {floor.name} (served from vLLM {floor.vllm})")
    if at_least is not None and _base(at_least) >= version(floor.vllm):
        return Verdict(True, f"its vLLM is at least {at_least}, >= {floor.vllm}, the first to serve {floor.name}")
    if at_most is not None and _base(at_most) < version(floor.vllm):
        return Verdict(False, f"its vLLM is at most {at_most}, older than {floor.vllm}, the first to serve {floor.name}")
    return Verdict(None, f"its vLLM version is not in the table ({floor.name} needs vLLM >= {floor.vllm})")


def best_image(architecture: str | None, sm: str | None, driver_major: int | None = None) -> NgcImage | None:
    """The newest listed NGC tag that serves `architecture` on `sm` with this driver."""
    candidates = [
        row for row in table().ngc_images
        if engine_serves(row.vllm, architecture).ok is not False
        and cuda_serves_gpu(row.cuda, sm)
        and (driver_major is None or min_driver(row.cuda) <= driver_major)
    ]
    return max(candidates, key=lambda row: version(row.tag), default=None)


def newest_image() -> NgcImage:
    return max(table().ngc_images, key=lambda row: version(row.tag))


def best_pypi_vllm(architecture: str | None, driver_major: int | None = None) -> PypiVllm | None:
    """The newest PyPI vLLM wheel that serves `architecture` and runs on this driver."""
    candidates = [
        row for row in table().pypi_vllm
        if engine_serves(row.version, architecture).ok is not False
        and (driver_major is None or min_driver(row.cuda) <= driver_major)
    ]
    return max(candidates, key=lambda row: version(row.version), default=None)


def _base(text: str) -> Version:
    """A vLLM version without its local part (0.20.1+cu130 -> 0.20.1); dev builds count as the
    release they lead to."""
    parsed = version(text.split("+", 1)[0])
    return Version(parsed.base_version)


@dataclass(frozen=True)
class EngineNeeds:
    """What a model profile needs of its engine, for `stackctl profiles`."""

    floor: str  # "vLLM >= 0.17.0", or "-" when not in the table
    image: str  # the NGC tag a fresh init renders for it ("-" when none serves it)
    native: str  # the PyPI vLLM install-engine pins for it ("-" when none serves it)


def engine_needs(architecture: str | None, sm: str | None = None) -> EngineNeeds:
    floor = architecture_floor(architecture)
    image = best_image(architecture, sm)
    wheel = best_pypi_vllm(architecture)
    return EngineNeeds(f"vLLM >= {floor.vllm}" if floor else "-",
                       f"{image.tag} (vLLM {image.vllm})" if image else "-",
                       f"vllm {wheel.version}" if wheel else "-")
