"""What pip resolved for an engine bundle, as a dependency graph evaluated for the target host.

pip's installation report (`pip install --dry-run --report`) lists every package of the
resolution with its metadata; the edges are each package's `Requires-Dist`, kept when their
environment markers hold on the target (its Python version and machine, with the extras the
parent asked for). The selection rules (reuse the host's torch, leave out what a lean server
never imports, leave out what the host has) are walks over this graph.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from stackctl.errors import StackError


class BundleError(StackError):
    """An engine bundle could not be made, read or installed."""


@dataclass(frozen=True)
class ResolvedPackage:
    name: str  # canonical (PEP 503) name
    version: str
    url: str
    sha256: str
    requires: tuple[str, ...]
    requested: bool  # a root of the resolution (vllm, torch)

    @property
    def filename(self) -> str:
        return unquote(urlsplit(self.url).path.rsplit("/", 1)[-1])


@dataclass(frozen=True)
class Edge:
    parent: str
    child: str
    specifier: SpecifierSet
    extras: frozenset[str]  # what the parent asks of the child: cuda-toolkit[cublas,...]
    when: str = ""  # the parent's extra that brings this requirement ("" for always)


@dataclass(frozen=True)
class Resolution:
    """One resolution for one target: the packages, the marker environment pip saw, and the
    requirements that hold there (build it with `Resolution.of`)."""

    packages: Mapping[str, ResolvedPackage]
    environment: Mapping[str, str]
    requirements: Mapping[str, tuple[Edge, ...]]

    @classmethod
    def of(cls, packages: Mapping[str, ResolvedPackage], environment: Mapping[str, str]) -> Resolution:
        asked: dict[str, set[str]] = {name: set() for name in packages}
        for package in packages.values():
            for requirement in _parsed(package.requires):
                child = canonicalize_name(requirement.name)
                if child in asked:
                    asked[child] |= {canonicalize_name(extra) for extra in requirement.extras}
        edges = {name: tuple(_edges_of(package, packages, environment, asked[name]))
                 for name, package in packages.items()}
        return cls(packages, environment, edges)

    @property
    def roots(self) -> list[str]:
        return [name for name, package in self.packages.items() if package.requested]

    def edges(self, name: str) -> tuple[Edge, ...]:
        """The requirements of `name` that hold on the target, with any extra of it."""
        return self.requirements.get(name, ())

    def reachable(self, roots: Iterable[str], *, blocked: frozenset[str] = frozenset()) -> set[str]:
        """Every package reachable from `roots` without entering a `blocked` one. An extra's
        requirements count only when a package walked through asks for that extra."""
        seen: set[tuple[str, str]] = set()
        stack: list[tuple[str, str]] = [(name, "") for name in map(canonicalize_name, roots) if name not in blocked]
        while stack:
            name, extra = stack.pop()
            if (name, extra) in seen or name not in self.packages:
                continue
            seen.add((name, extra))
            for edge in self.edges(name):
                if edge.when == extra and edge.child not in blocked:
                    stack += [(edge.child, ""), *((edge.child, wanted) for wanted in edge.extras)]
        return {name for name, _extra in seen}

    def parents(self, name: str) -> list[Edge]:
        return [edge for edges in self.requirements.values() for edge in edges if edge.child == name]

    def requirement_on(self, name: str) -> SpecifierSet:
        """What every package of the resolution that needs `name` accepts of it, combined."""
        combined = SpecifierSet()
        for edge in self.parents(name):
            combined &= edge.specifier
        return combined


def _parsed(requires: Iterable[str]) -> Iterator[Requirement]:
    for text in requires:
        try:
            yield Requirement(text)
        except InvalidRequirement:
            continue


def _edges_of(package: ResolvedPackage, packages: Mapping[str, ResolvedPackage], environment: Mapping[str, str],
              extras: set[str]) -> Iterator[Edge]:
    for requirement in _parsed(package.requires):
        child = canonicalize_name(requirement.name)
        if child not in packages or child == package.name:
            continue
        when = next((extra for extra in ("", *sorted(extras)) if _holds(requirement.marker, environment, extra)),
                    None)
        if when is not None:
            yield Edge(package.name, child, requirement.specifier,
                       frozenset(canonicalize_name(extra) for extra in requirement.extras), when)


def _holds(marker: Marker | None, environment: Mapping[str, str], extra: str) -> bool:
    return marker is None or marker.evaluate({**environment, "extra": extra})


def parse_report(report: Mapping[str, Any]) -> Resolution:
    """The Resolution in a pip installation report (format version 1)."""
    if str(report.get("version")) != "1" or not isinstance(report.get("install"), list):
        raise BundleError("pip's installation report is not in a format stackctl reads (version 1 expected): "
                          "upgrade pip in stackctl's environment")
    packages: dict[str, ResolvedPackage] = {}
    for item in report["install"]:
        metadata = item["metadata"]
        info = item["download_info"]
        hashes = info.get("archive_info", {}).get("hashes") or {}
        sha256 = hashes.get("sha256") or info.get("archive_info", {}).get("hash", "").removeprefix("sha256=")
        name = canonicalize_name(metadata["name"])
        packages[name] = ResolvedPackage(name, metadata["version"], info["url"], sha256,
                                         tuple(metadata.get("requires_dist") or ()), bool(item.get("requested")))
    return Resolution.of(packages, dict(report.get("environment") or {}))
