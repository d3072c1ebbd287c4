"""An image pulled by its `latest` tag from a repository that has none, read by the image-pull signature and by the
fallback alike.

`docker pull NAME` without a tag asks for NAME:latest ("Using default tag: latest"), and a repository need not have
that tag: Docker Hub answers an existing repository without it with "manifest for NAME:latest not found: manifest
unknown: manifest unknown" (a repository that does not exist, or is private, is "pull access denied" instead).
ivangabriele/dockfish#13 ("latest doesn't exist indeed ... You need to specify the tag `15`"),
docker/docker-credential-helpers#266 and docker.kitematic#5167 (a maintainer of Docker: "that repository does not have
a `:latest` tag, so you will have to specify a specific tag"), whitelok/watermark-remover#18 (a version tag); podman
says "reading manifest latest in NAME: manifest unknown" (mgm3746/garbagecat#183, fixed by publishing `latest`).
"""

from __future__ import annotations

import re

LATEST_MISSING = re.compile(r"manifest for (?P<image>[\w.-]+(?::\d+)?(?:/[\w.-]+)*):latest not found"
                            r"|reading manifest latest in (?P<podman>[\w.-]+(?::\d+)?(?:/[\w.-]+)*): manifest unknown")


def latest_missing(text: str) -> str | None:
    """The repository whose `latest` tag the registry does not have, or None."""
    match = LATEST_MISSING.search(text)
    return (match["image"] or match["podman"]) if match else None


def tags_page(image: str) -> str:
    """Where a repository's tags are listed: Docker Hub's page for a Hub repository (library/ for an official one),
    else the registry's own."""
    registry = image.split("/", 1)[0]
    if "/" in image and ("." in registry or ":" in registry):
        return f"its registry's page for {image}"
    path = f"r/{image}" if "/" in image else f"_/{image}"
    return f"https://hub.docker.com/{path}/tags"


def no_latest_fix(image: str, key: str | None, login: str) -> str:
    where = (f"set {key} in stack.yaml to {image}:TAG" if key else
             f"write the tag where the image is named (`image: {image}:TAG` in the compose file, `docker pull "
             f"{image}:TAG`)")
    return (f"{image}:latest does not exist: the repository {image} has no `latest` tag (the one Docker pulls when no "
            "tag is given: \"Using default tag: latest\"), which a repository need not have. Pull a specific version "
            f"tag instead: {where}, with a tag the repository has ({tags_page(image)} lists them; `docker buildx "
            f"imagetools inspect {image}:TAG` checks one, `skopeo list-tags docker://{image}` lists them from the "
            "command line). Where no tags page exists, check the repository's name; a private one answers "
            f"so too without a login: {login} first")
