"""Which packages of a resolution go into an engine bundle, and why the others stay out.

Three rules, each a walk over the resolution's dependency graph:
- reuse torch: the host already has torch (the same build PyPI serves), so torch and everything
  torch itself depends on are there too;
- lean: what vLLM's OpenAI server never imports on the FlashAttention path (lean.yaml), and
  whatever only those packages needed;
- host packages: what `pip list --format=freeze` on the target shows at a version every
  requirement of the resolution accepts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from stackctl.engine.bundle_graph import Resolution, ResolvedPackage
from stackctl.engine.bundle_lean import LeanRules

ROOT = "vllm"
TORCH = "torch"


@dataclass(frozen=True)
class LeftOut:
    name: str
    version: str
    reason: str


@dataclass(frozen=True)
class HostRequirement:
    """A package the bundle counts on the host for: `name` at a version `specifier` accepts."""

    name: str
    specifier: str
    version: str  # what the host's freeze listed


@dataclass(frozen=True)
class SelectionRules:
    reuse_torch: bool = False
    host_packages: Mapping[str, str] = field(default_factory=dict)  # canonical name -> version
    lean: LeanRules | None = None


@dataclass(frozen=True)
class Selection:
    kept: tuple[ResolvedPackage, ...]
    left_out: tuple[LeftOut, ...]
    host_requirements: tuple[HostRequirement, ...]

    @property
    def torch_bundled(self) -> bool:
        return any(package.name == TORCH for package in self.kept)


def select(resolution: Resolution, rules: SelectionRules) -> Selection:
    packages = resolution.packages
    if ROOT not in packages:
        raise ValueError("the resolution has no vllm")
    torch_closure = resolution.reachable([TORCH]) if rules.reuse_torch else set()
    blocked = frozenset(name for name in packages
                        if rules.lean is not None and name not in (ROOT, TORCH) and rules.lean.rule_for(name))
    roots = [ROOT] if rules.reuse_torch else [ROOT, TORCH]
    needed = resolution.reachable(roots, blocked=blocked)
    host: dict[str, str] = {canonicalize_name(name): version for name, version in rules.host_packages.items()}

    kept: list[ResolvedPackage] = []
    left_out: list[LeftOut] = []
    on_host: list[HostRequirement] = []
    for name in sorted(packages, key=lambda name: (name != ROOT, name)):
        package = packages[name]
        reason = _reason_left_out(resolution, name, torch_closure, blocked, needed, rules)
        if reason is None and name in host and host_version_accepted(resolution, package, host[name]):
            accepted = str(resolution.requirement_on(name)) if not package.requested else f"=={package.version}"
            reason = "on the host (--host-packages)"
            on_host.append(HostRequirement(name, accepted, host[name]))
        if reason is None:
            kept.append(package)
        else:
            left_out.append(LeftOut(name, package.version, reason))
    return Selection(tuple(kept), tuple(left_out), tuple(on_host))


def _reason_left_out(resolution: Resolution, name: str, torch_closure: set[str], blocked: frozenset[str],
                     needed: set[str], rules: SelectionRules) -> str | None:
    if name == TORCH and name in torch_closure:
        return f"reused: the host has torch {resolution.packages[name].version}"
    if name in torch_closure:
        return "the host's torch depends on it"
    if name in blocked and rules.lean is not None:
        rule = rules.lean.rule_for(name)
        return f"lean: {rule.why}" if rule else "lean"
    if name not in needed:
        if rules.lean is None:
            return "not needed on the target (its markers do not hold there)"
        users = sorted({edge.parent for edge in resolution.parents(name)} - needed)
        return f"lean: needed only by {', '.join(users)}" if users else "lean: nothing kept needs it"
    return None


def host_version_accepted(resolution: Resolution, package: ResolvedPackage, host_version: str) -> bool:
    """Does the host's version do for every requirement on `package` in the resolution?"""
    try:
        found = Version(host_version)
    except InvalidVersion:
        return host_version == package.version
    if found == Version(package.version):
        return True
    if package.requested:  # vllm==V / torch===T: the host's must be that release
        return Version(found.base_version) == Version(package.version) and found.local is not None
    return resolution.requirement_on(package.name).contains(found, prereleases=True)
