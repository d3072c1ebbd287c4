"""A matched log line and what surrounds it, and the settings the log itself states.

Builders read values here rather than from the trigger alone: vLLM's messages wrap across lines
in some logs (`docker logs` at 80 columns, issue pastes), so values are read from the matched line
joined with the next two.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from stackctl.diagnosis.verdict import DiagnosisContext

# How many lines after the matched one may carry the rest of a wrapped message.
_WRAP_LINES = 2

# vLLM states the settings it runs with once per start: "non-default args: {...}" (V1),
# "args: Namespace(...)" (older), "Initializing an LLM engine with config: ..." (V0).
_SETTINGS_LINE = re.compile(r"non-default args|Namespace\(|engine \(v[\d.]+\) with config|engine with config")
_SETTING = re.compile(
    r"['\"]?\b(max_model_len|max_seq_len|max_num_seqs|gpu_memory_utilization|port)['\"]?\s*[:=]\s*([0-9][0-9.]*)"
)


@dataclass(frozen=True)
class StatedSettings:
    """What the log says the engine ran with (None where it does not say)."""

    max_model_len: int | None = None
    max_num_seqs: int | None = None
    gpu_memory_utilization: float | None = None
    # The API server's port (--port).
    port: int | None = None


def read_stated_settings(lines: Sequence[str]) -> StatedSettings:
    found: dict[str, str] = {}
    for line in lines:
        if _SETTINGS_LINE.search(line):
            for name, value in _SETTING.findall(line):
                found["max_model_len" if name == "max_seq_len" else name] = value.rstrip(".")
    return StatedSettings(
        max_model_len=_to_int(found.get("max_model_len")),
        max_num_seqs=_to_int(found.get("max_num_seqs")),
        gpu_memory_utilization=_to_float(found.get("gpu_memory_utilization")),
        port=_to_int(found.get("port")),
    )


@dataclass(frozen=True)
class Evidence:
    """One trigger match inside the lines of one engine start."""

    lines: Sequence[str]
    index: int
    context: DiagnosisContext
    settings: StatedSettings

    @property
    def line(self) -> str:
        return self.lines[self.index].strip()

    @property
    def text(self) -> str:
        """The matched line and the next ones, joined: where wrapped messages are read whole."""
        following = self.lines[self.index : self.index + 1 + _WRAP_LINES]
        return " ".join(part.strip() for part in following)

    def read(self, pattern: re.Pattern[str]) -> dict[str, str]:
        """Named groups of `pattern` in the matched text (empty when it does not match)."""
        match = pattern.search(self.text)
        return {key: value for key, value in match.groupdict().items() if value is not None} if match else {}

    def nearest_before(self, phases: Mapping[str, re.Pattern[str]]) -> str | None:
        """The phase whose marker is closest above the matched line; any marker in the run when
        none is above it (some logs are pasted newest first)."""
        for position in range(self.index - 1, -1, -1):
            for phase, pattern in phases.items():
                if pattern.search(self.lines[position]):
                    return phase
        for position in range(self.index + 1, len(self.lines)):
            for phase, pattern in phases.items():
                if pattern.search(self.lines[position]):
                    return phase
        return None

    def all_found(self, pattern: re.Pattern[str], group: str) -> list[str]:
        """Every distinct value of `group` in the run, in order of first appearance."""
        values: list[str] = []
        for line in self.lines:
            for match in pattern.finditer(line):
                value = match.group(group)
                if value and value not in values:
                    values.append(value)
        return values


def _to_int(text: str | None) -> int | None:
    try:
        return int(float(text)) if text is not None else None
    except ValueError:
        return None


def _to_float(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None
