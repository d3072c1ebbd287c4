"""The real logs under tests/data/: one file per log, a `# source: <issue URL>` line, then the log."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "data"
FAILURE_LOGS = DATA / "vllm_failures"
REQUEST_ERRORS = DATA / "vllm_request_errors"
SOURCE_PREFIX = "# source: https://github.com/"


def read_log(path: Path) -> tuple[str, list[str]]:
    """(source URL, the log's lines)."""
    header, *lines = path.read_text().splitlines()
    assert header.startswith(SOURCE_PREFIX), f"{path.name}: first line must be '{SOURCE_PREFIX}...'"
    return header.removeprefix("# source: "), lines


def expected_class(path: Path) -> str:
    return path.name.split("__", 1)[0]
