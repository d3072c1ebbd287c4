"""The real logs under tests/data/: one file per log, a `# source: <URL>` line, then the log.

The source is the public report the log was quoted from: a GitHub issue or pull request, or a forum
thread, Q&A answer or blog post (any https URL without spaces).

tests/data/service_failures/ (every service of the stack) and tests/data/heldout_*/ add
header lines: `# service: NAME` (whose log it is) and, held-out only, `# fix: field=value, ...`
(what a right fix names: any one suffices) and, where the report states it, `# machine: aarch64` (the
reporter's host architecture, which stackctl knows of its own host)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

DATA = Path(__file__).resolve().parents[2] / "data"
FAILURE_LOGS = DATA / "vllm_failures"
REQUEST_ERRORS = DATA / "vllm_request_errors"
SERVICE_FAILURES = DATA / "service_failures"
HELDOUT_FAILURES = DATA / "heldout_failures"
# Held-out rounds measured once and then built from: now part of the own set.
HELDOUT_ROUNDS = tuple(DATA / f"heldout_round{number}" for number in range(1, 43))
SOURCE_PREFIX = "# source: "


def is_source_url(url: str) -> bool:
    """A real public address: https, a dotted host, a path, no spaces."""
    parts = urlsplit(url)
    return (parts.scheme == "https" and "." in parts.netloc and parts.path not in ("", "/")
            and not any(char.isspace() for char in url))


def read_log(path: Path) -> tuple[str, list[str]]:
    """(source URL, the log's lines)."""
    header, *lines = path.read_text().splitlines()
    source = header.removeprefix(SOURCE_PREFIX)
    assert header.startswith(SOURCE_PREFIX) and is_source_url(source), \
        f"{path.name}: first line must be '{SOURCE_PREFIX}https://...' (the public report's address)"
    return source, lines


def read_headers(path: Path) -> tuple[dict[str, str], list[str]]:
    """(header fields, the log's lines): `# key: value` lines at the top, then the log."""
    headers: dict[str, str] = {}
    lines = path.read_text().splitlines()
    while lines and lines[0].startswith("# ") and ": " in lines[0]:
        key, _, value = lines.pop(0)[2:].partition(": ")
        headers[key] = value
    assert is_source_url(headers.get("source", "")), f"{path.name}: '# source: https://...' missing"
    return headers, lines


def expected_class(path: Path) -> str:
    return path.name.split("__", 1)[0]


def throughput_lines(count: int) -> list[str]:
    """A long-running vLLM's log as `logs --explain` mostly reads it: throughput lines that match
    nothing (the noise before a failure, for the long-log test and benchmarks/diagnosis_speed.py)."""
    return [f"(APIServer pid=1) INFO 01-01 00:00:{i % 60:02d} [loggers.py:123] Engine 000: Avg prompt "
            f"throughput: {i}.0 tokens/s, Running: 1 reqs" for i in range(count)]
