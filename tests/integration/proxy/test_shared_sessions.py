"""Sessions kept by one keeper for several workers (sessions/shared.py), over a real Unix
socket: a conversation whose requests reach two workers is one session, followed turn by turn."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from stackctl.proxy.metrics import ProxyMetrics
from stackctl.proxy.sessions.capture import Capture
from stackctl.proxy.sessions.parts import chat_payload_parts
from stackctl.proxy.sessions.service import LocalSessions
from stackctl.proxy.sessions.shared import SessionKeeper, SharedSessions
from stackctl.proxy.sessions.tracker import Observation, SessionTracker

pytestmark = pytest.mark.integration


def request(*turns: str, now: str = "10:00:00") -> Observation:
    messages = [{"role": "system", "content": f"Be brief. Time: {now}"}]
    messages += [{"role": "user" if i % 2 == 0 else "assistant", "content": text} for i, text in enumerate(turns)]
    payload = {"model": "m", "messages": messages}
    return Observation("alice", "conversation-1", turns[0], "/v1/chat/completions", chat_payload_parts(payload))


def test_two_workers_one_conversation(tmp_path: Path) -> None:
    async def scenario() -> None:
        kept = LocalSessions(SessionTracker(capture=Capture(tmp_path / "captures")))
        path = str(tmp_path / "sessions.sock")
        server = await asyncio.start_unix_server(SessionKeeper(kept).serve, path=path)
        metrics = [ProxyMetrics(), ProxyMetrics()]
        workers = [SharedSessions(path, metrics[0]), SharedSessions(path, metrics[1])]
        readers = [asyncio.create_task(worker.run()) for worker in workers]
        try:
            # Sent before the first worker is connected: held, then delivered.
            workers[0].observe(request("fix the bug"))(1000, 0)
            await asyncio.sleep(0.05)
            workers[1].observe(request("fix the bug", "done", "add a test"))(1100, 990)
            state = await workers[1].capture(5)
            assert state.active and state.directory
            workers[0].observe(request("fix the bug", "done", "add a test", "ok", "go", now="10:00:09"))
            report = await workers[0].report(5, None)
            (session,) = report.keys[0].sessions
            assert [turn.outcome for turn in session.turns] == ["first", "kept", "broken"]
            assert (session.turns[1].prompt_tokens, session.turns[1].cached_tokens) == (1100, 990)
            assert session.turns[2].change == "messages[0] (system).content changed at byte 16: a time of day"
            assert session.client_session == "conversation…"
            stopped = await workers[0].capture(0)
            assert not stopped.active
            # Each worker counted the outcomes of what it observed (the keeper told it).
            rendered = [m.render().decode() for m in metrics]
            assert 'stackctl_proxy_prefix_requests_total{key="alice",outcome="first"} 1.0' in rendered[0]
            assert 'stackctl_proxy_prefix_requests_total{key="alice",outcome="broken"} 1.0' in rendered[0]
            assert 'stackctl_proxy_prefix_broken_sessions_total{key="alice"} 1.0' in rendered[0]
            assert 'stackctl_proxy_prefix_requests_total{key="alice",outcome="kept"} 1.0' in rendered[1]
        finally:
            for reader in readers:
                reader.cancel()
            server.close()
            await server.wait_closed()
            kept.close()

    asyncio.run(scenario())
