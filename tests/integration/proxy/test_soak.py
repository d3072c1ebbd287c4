"""The soak benchmark (benchmarks/soak.py) for 2 minutes: 64 clients, mixed Anthropic/OpenAI,
streamed/unstreamed, tools, random disconnects, through a real `stackctl proxy serve` process.
Its targets are not timing targets, so they are asserted here: RSS growth under 10% after
warm-up, no leaked file descriptor, no unexpected error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(600)]

REPO = Path(__file__).resolve().parents[3]


def test_two_minute_soak(tmp_path: Path) -> None:
    report_path = tmp_path / "soak.json"
    result = subprocess.run(
        [
            sys.executable,
            "benchmarks/soak.py",
            "--duration",
            "120",
            "--json",
            str(report_path),
            "--log-dir",
            str(tmp_path),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=540,
        check=False,
    )
    assert report_path.exists(), result.stdout[-3000:] + result.stderr[-3000:]
    report = json.loads(report_path.read_text())
    print(result.stdout)
    assert report["requests"] > 1000  # the load really ran
    assert report["errors"].get("disconnected", 0) > 0  # and clients really walked away
    assert report["unexpected_errors"] == 0, (report["errors"], report["proxy_log_problems"])
    assert report["fds"]["leaked"] == 0, report["fds"]
    assert report["rss"]["growth_pct"] < 10, report["rss"]
    assert result.returncode == 0, result.stderr[-3000:]
