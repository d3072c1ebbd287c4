"""The cache report's content (proxy/sessions/report.py) and the opt-in capture's files."""

from __future__ import annotations

import stat
from pathlib import Path

from stackctl.proxy.sessions.capture import KEEP_AFTER_S, Capture
from stackctl.proxy.sessions.report import cache_report
from stackctl.proxy.sessions.tracker import SessionTracker
from tests.unit.proxy.test_sessions import SYSTEM, Clock, chat, observe


def test_the_report_lists_the_last_sessions_per_key_with_each_break() -> None:
    clock = Clock()
    tracker = SessionTracker(clock=clock)
    for key in ("alice", "bob"):
        for number in range(3):
            observe(tracker, chat(f"{key} {number}"), key=key)
            clock.now += 1
    observe(tracker, chat("alice 2", "ok", "next", system=SYSTEM.replace("short", "brief")), key="alice")
    report = cache_report(tracker, per_key=2)
    assert [k.key for k in report.keys] == ["alice", "bob"]
    alice = report.keys[0].sessions
    assert len(alice) == 2 and alice[0].turns_total == 2 and alice[0].breaks == 1
    broken = alice[0].turns[1]
    assert broken.outcome == "broken" and broken.change is not None
    assert broken.change.startswith("messages[0] (system).content changed in bytes ")
    assert broken.diff is None  # no capture: no text
    assert cache_report(tracker, per_key=5, key="bob").keys[0].key == "bob"


def test_a_capture_shows_the_exact_byte_and_a_diff_in_owner_only_files(tmp_path: Path) -> None:
    clock = Clock()
    capture = Capture(tmp_path / "captures", clock=clock)
    tracker = SessionTracker(capture=capture, clock=clock)
    observe(tracker, chat("hi", system="line one\nToday is 2026-11-24.\nline three"))
    capture.start(minutes=10)
    observe(tracker, chat("hi", system="line one\nToday is 2026-11-24.\nline three"))
    observe(tracker, chat("hi", system="line one\nToday is 2026-11-25.\nline three"))
    turn = cache_report(tracker).keys[0].sessions[0].turns[-1]
    byte = len("line one\nToday is 2026-11-2")
    assert turn.change == f"messages[0] (system).content changed at byte {byte}: a date"
    assert turn.diff is not None
    assert "-Today is 2026-11-24.\n+Today is 2026-11-25.\n" in turn.diff
    assert "--- turn 2\n+++ turn 3\n" in turn.diff
    folder = tmp_path / "captures"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    files = sorted(folder.rglob("*.jsonl"))
    assert [f.name for f in files] == ["2.jsonl", "3.jsonl"]  # turn 1 came before the capture
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    assert all(stat.S_IMODE(f.parent.stat().st_mode) == 0o700 for f in files)
    # Past its window, nothing more is captured; an hour later the prompts are gone.
    clock.now += 11 * 60
    observe(tracker, chat("hi", "a", "b", system="line one\nToday is 2026-11-25.\nline three"))
    assert len(list(folder.rglob("*.jsonl"))) == 2
    clock.now += KEEP_AFTER_S
    report = cache_report(tracker)
    assert not list(folder.rglob("*.jsonl")) and not report.capture.active


def test_stopping_a_capture_deletes_its_private_directory() -> None:
    capture = Capture()
    tracker = SessionTracker(capture=capture)
    capture.start(minutes=5)
    observe(tracker, chat("hi"))
    where = capture.where
    assert where is not None and list(where.rglob("*.jsonl"))
    assert stat.S_IMODE(where.stat().st_mode) == 0o700
    capture.start(minutes=0)
    assert not where.exists() and not capture.active
