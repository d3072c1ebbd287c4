"""The cache report (`GET /admin/cache-report`): the tracker's sessions as the wire format says,
with each break's place, and with a capture its exact byte and the two prompts' diff."""

from __future__ import annotations

from stackctl.proxy.protocol.cache_report import (
    CacheReport,
    CaptureState,
    KeyReport,
    SessionReport,
    TurnReport,
)
from stackctl.proxy.sessions.capture import Capture, exact_offset, prompt_diff
from stackctl.proxy.sessions.tracker import Change, Session, SessionTracker, Turn

DEFAULT_SESSIONS_PER_KEY = 5


def cache_report(tracker: SessionTracker, *, per_key: int = DEFAULT_SESSIONS_PER_KEY,
                 key: str | None = None) -> CacheReport:
    capture = tracker.capture
    if capture is not None:
        capture.expire()
    keys = [
        KeyReport(key=name, sessions=[_session(session, capture) for session in sessions])
        for name, sessions in sorted(tracker.recent(per_key, key).items())
    ]
    return CacheReport(
        generated_at=tracker.clock(),
        tracked_sessions=len(tracker.sessions),
        capacity=tracker.capacity,
        keys=keys,
        capture=capture_state(capture),
    )


def capture_state(capture: Capture | None) -> CaptureState:
    if capture is None or not capture.until:
        return CaptureState()
    where = capture.where
    return CaptureState(active=capture.active, until=capture.until, kept_until=capture.kept_until,
                        directory=str(where) if where else None)


def _session(session: Session, capture: Capture | None) -> SessionReport:
    turns = list(session.turns)
    previous: dict[int, Turn] = {turn.number: turn for turn in turns}
    return SessionReport(
        id=session.id,
        client_session=_shortened(session.client_session),
        started=session.started,
        last_seen=session.last_seen,
        turns_total=session.turns_total,
        breaks=session.breaks,
        turns=[_turn(session.id, turn, previous.get(turn.number - 1), capture) for turn in turns],
    )


def _turn(session: str, turn: Turn, before: Turn | None, capture: Capture | None) -> TurnReport:
    change, diff = turn.change, None
    if change is not None and capture is not None and before is not None and before.captured and turn.captured:
        old, new = capture.read(session, before.number), capture.read(session, turn.number)
        if old is not None and new is not None:
            diff = prompt_diff(old, new, (f"turn {before.number}", f"turn {turn.number}"))
            exact = exact_offset(old, new, change.label) if change.span else None
            if exact is not None:
                change = Change(change.label, exact, 1, change.reason)
    return TurnReport(
        turn=turn.number,
        at=turn.at,
        route=turn.route,
        messages=turn.messages,
        prompt_bytes=turn.prompt_bytes,
        outcome=turn.outcome,
        kept_messages=turn.kept_messages,
        kept_bytes=turn.kept_bytes,
        previous_bytes=turn.previous_bytes,
        prompt_tokens=turn.prompt_tokens,
        cached_tokens=turn.cached_tokens,
        change=change.describe() if change is not None else None,
        diff=diff,
    )


def _shortened(value: str | None) -> str | None:
    return None if value is None else (value if len(value) <= 12 else value[:12] + "…")
