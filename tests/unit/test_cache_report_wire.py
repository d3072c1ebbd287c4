"""The cache report's wire format has two readers of one contract: the proxy writes it
(stackctl/proxy/protocol/cache_report.py) and the CLI reads it (stackctl/proxy_admin.py), each
without importing the other. This holds them together."""

from __future__ import annotations

from pydantic import BaseModel

from stackctl import proxy_admin
from stackctl.proxy.protocol import cache_report as wire
from stackctl.proxy.sessions.capture import Capture
from stackctl.proxy.sessions.parts import chat_payload_parts
from stackctl.proxy.sessions.report import cache_report
from stackctl.proxy.sessions.tracker import Observation, SessionTracker

PAIRS: list[tuple[type[BaseModel], type[BaseModel]]] = [
    (wire.CacheReport, proxy_admin.CacheReport),
    (wire.KeyReport, proxy_admin.KeySessions),
    (wire.SessionReport, proxy_admin.SessionFigures),
    (wire.TurnReport, proxy_admin.TurnFigures),
    (wire.CaptureState, proxy_admin.CaptureState),
]


def test_the_cli_reads_every_field_the_proxy_writes() -> None:
    for written, read in PAIRS:
        assert set(written.model_fields) == set(read.model_fields), (written.__name__, read.__name__)


def test_a_report_the_proxy_makes_reads_back_whole_in_the_cli() -> None:
    capture = Capture()
    tracker = SessionTracker(capture=capture)
    capture.start(minutes=1)
    try:
        for system in ("Now: 10:00:00", "Now: 10:00:05"):
            payload = {"model": "m", "messages": [{"role": "system", "content": system},
                                                  {"role": "user", "content": "hi"}]}
            turn = tracker.observe(Observation("alice", "s1", "hi", "/v1/chat/completions", chat_payload_parts(payload)))
            turn.usage(100, 64)
        document = cache_report(tracker).model_dump(mode="json")
        read = proxy_admin.CacheReport.model_validate(document)
        assert read.model_dump(mode="json") == document
        last = read.keys[0].sessions[0].turns[-1]
        assert last.cached_share == 0.64 and last.diff and last.change
    finally:
        capture.stop()
