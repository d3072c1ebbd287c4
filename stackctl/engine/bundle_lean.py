"""The lean engine bundle's rules (stackctl/engine/lean.yaml): what vLLM's OpenAI server never
imports on the FlashAttention path, and the environment it then needs."""

from __future__ import annotations

from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path

import yaml
from packaging.utils import canonicalize_name
from pydantic import BaseModel, ConfigDict

_RULES = Path(__file__).with_name("lean.yaml")


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LeanSetting(_Row):
    value: str
    why: str


class LeanLeaveOut(_Row):
    name: str  # a distribution name, or a glob of names (opentelemetry-*)
    why: str

    def matches(self, package: str) -> bool:
        return fnmatchcase(canonicalize_name(package), canonicalize_name(self.name))


class LeanRules(_Row):
    environment: dict[str, LeanSetting]
    leave_out: tuple[LeanLeaveOut, ...]

    def rule_for(self, package: str) -> LeanLeaveOut | None:
        return next((rule for rule in self.leave_out if rule.matches(package)), None)

    def environment_values(self) -> dict[str, str]:
        return {name: setting.value for name, setting in self.environment.items()}


@cache
def lean_rules() -> LeanRules:
    return LeanRules.model_validate(yaml.safe_load(_RULES.read_text()))
