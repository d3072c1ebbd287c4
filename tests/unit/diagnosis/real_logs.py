"""The real logs under tests/data/: one file per log, a `# source: <issue URL>` line, then the log.

tests/data/service_failures/ (every service of the stack) and tests/data/heldout_*/ add
header lines: `# service: NAME` (whose log it is) and, held-out only, `# fix: field=value, ...`
(what a right fix names: any one suffices)."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "data"
FAILURE_LOGS = DATA / "vllm_failures"
REQUEST_ERRORS = DATA / "vllm_request_errors"
SERVICE_FAILURES = DATA / "service_failures"
HELDOUT_FAILURES = DATA / "heldout_failures"
# Held-out rounds measured once and then built from: now part of the own set.
HELDOUT_ROUNDS = tuple(DATA / f"heldout_round{number}" for number in range(1, 16))
SOURCE_PREFIX = "# source: https://github.com/"


def read_log(path: Path) -> tuple[str, list[str]]:
    """(source URL, the log's lines)."""
    header, *lines = path.read_text().splitlines()
    assert header.startswith(SOURCE_PREFIX), f"{path.name}: first line must be '{SOURCE_PREFIX}...'"
    return header.removeprefix("# source: "), lines


def read_headers(path: Path) -> tuple[dict[str, str], list[str]]:
    """(header fields, the log's lines): `# key: value` lines at the top, then the log."""
    headers: dict[str, str] = {}
    lines = path.read_text().splitlines()
    while lines and lines[0].startswith("# ") and ": " in lines[0]:
        key, _, value = lines.pop(0)[2:].partition(": ")
        headers[key] = value
    assert headers.get("source", "").startswith(SOURCE_PREFIX.removeprefix("# source: ")), path.name
    return headers, lines


def expected_class(path: Path) -> str:
    return path.name.split("__", 1)[0]


def throughput_lines(count: int) -> list[str]:
    """A long-running vLLM's log as `logs --explain` mostly reads it: throughput lines that match
    nothing (the noise before a failure, for the long-log test and benchmarks/diagnosis_speed.py)."""
    return [f"(APIServer pid=1) INFO 01-01 00:00:{i % 60:02d} [loggers.py:123] Engine 000: Avg prompt "
            f"throughput: {i}.0 tokens/s, Running: 1 reqs" for i in range(count)]
