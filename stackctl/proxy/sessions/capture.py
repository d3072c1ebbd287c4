"""The opt-in capture: for a limited time, each tracked request's prompt is written to a file, so
a report can show what changed at a break, as a unified diff and to the byte.

Off unless asked for (`POST /admin/capture`, `stackctl cache-report --capture`). Files are the
owner's alone (directory 0700, files 0600), hold the prompt parts the backend got (never a key:
keys travel in headers), and are deleted `KEEP_AFTER_S` after the capture ends, when it is
stopped, or when the proxy stops. A directory the proxy made itself is removed with them.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from stackctl.proxy.sessions.fingerprint import Part

KEEP_AFTER_S = 3600.0  # captured prompts outlive the capture by this much, to be reported on
_DIFF_CONTEXT = 3


@dataclass(frozen=True, slots=True)
class CapturedPart:
    label: str
    text: str


@dataclass
class Capture:
    directory: Path | None = None  # None: a private temporary directory, made on first use
    clock: Callable[[], float] = time.time
    until: float = 0.0
    _made: Path | None = field(default=None, repr=False)

    @property
    def active(self) -> bool:
        return self.clock() < self.until

    @property
    def kept_until(self) -> float | None:
        return self.until + KEEP_AFTER_S if self.until else None

    @property
    def where(self) -> Path | None:
        return self.directory or self._made

    def start(self, minutes: float) -> None:
        """Capture from now for `minutes` (0: stop now and delete what was captured)."""
        if minutes <= 0:
            self.stop()
            return
        self._ensure_directory()
        self.until = self.clock() + minutes * 60

    def stop(self) -> None:
        self.until = 0.0
        self._delete_all()

    def expire(self) -> None:
        """Deletes the captured prompts once they are past keeping."""
        kept_until = self.kept_until
        if kept_until is not None and self.clock() >= kept_until:
            self.stop()

    def keep(self, session: str, turn: int, parts: Sequence[Part]) -> bool:
        """Writes this turn's prompt when capturing; True when it did."""
        self.expire()
        if not self.active:
            return False
        folder = self._ensure_directory() / session
        folder.mkdir(mode=0o700, exist_ok=True)
        lines = (json.dumps({"label": p.label, "text": p.data.decode("utf-8", "replace")}) for p in parts)
        _write_private(folder / f"{turn}.jsonl", "\n".join(lines) + "\n")
        return True

    def read(self, session: str, turn: int) -> list[CapturedPart] | None:
        where = self.where
        if where is None:
            return None
        try:
            text = (where / session / f"{turn}.jsonl").read_text(encoding="utf-8")
        except OSError:
            return None
        return [CapturedPart(**json.loads(line)) for line in text.splitlines() if line]

    def forget(self, session: str) -> None:
        where = self.where
        if where is not None:
            shutil.rmtree(where / session, ignore_errors=True)

    def _ensure_directory(self) -> Path:
        if self.directory is not None:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(self.directory, 0o700)
            return self.directory
        if self._made is None or not self._made.exists():
            self._made = Path(tempfile.mkdtemp(prefix="stackctl-proxy-capture-"))  # mode 0700
        return self._made

    def _delete_all(self) -> None:
        if self._made is not None:
            shutil.rmtree(self._made, ignore_errors=True)
            self._made = None
        elif self.directory is not None and self.directory.exists():
            for session in self.directory.iterdir():
                if session.is_dir():
                    shutil.rmtree(session, ignore_errors=True)


def _write_private(path: Path, text: str) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    with contextlib.suppress(OSError):
        os.chmod(path, 0o600)  # a file that existed keeps its mode otherwise


def prompt_diff(before: list[CapturedPart], after: list[CapturedPart], names: tuple[str, str]) -> str:
    """The two prompts part by part (a header line, then the text as the model reads it)."""

    def lines(parts: list[CapturedPart]) -> list[str]:
        out: list[str] = []
        for part in parts:
            out.append(f"### {part.label}\n")
            out.extend(line + "\n" for line in part.text.split("\n"))
        return out

    return "".join(difflib.unified_diff(lines(before), lines(after), *names, n=_DIFF_CONTEXT))


def exact_offset(before: list[CapturedPart], after: list[CapturedPart], label: str) -> int | None:
    """The first byte where part `label` differs between the two prompts (None: not in both)."""
    old = next((part.text for part in before if part.label == label), None)
    new = next((part.text for part in after if part.label == label), None)
    if old is None or new is None:
        return None
    old_bytes, new_bytes = old.encode("utf-8", "replace"), new.encode("utf-8", "replace")
    length = min(len(old_bytes), len(new_bytes))
    return next((i for i in range(length) if old_bytes[i] != new_bytes[i]), length)
