"""Per-session prefix stability: each request of a conversation compared with the one before.

A session is one conversation of one key: the client's session header where it sends one
(Claude Code, Codex, opencode), and the first user turn's text, hashed. The header alone would
mix a conversation with its side requests (opencode's title request shares its session id), the
first user turn alone two conversations that start alike. The tracker keeps the last request's
checksums (fingerprint.py), never its text, and the last turns' figures, for an LRU of
sessions: memory is bounded by `capacity` sessions of `turns_kept` turns. Metrics are the
caller's (service.py counts each turn where it is served).
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from stackctl.proxy.protocol.cache_report import Outcome
from stackctl.proxy.sessions.capture import Capture
from stackctl.proxy.sessions.fingerprint import Fingerprint, Part, PrefixMatch, compare, fingerprint
from stackctl.proxy.sessions.volatile import suspect_at

# The headers clients name their conversation in, most specific first: Claude Code, Codex
# (`session-id`, also `thread-id`), opencode (`x-session-id`, `x-session-affinity`, and
# `x-opencode-session` to its own provider).
CLIENT_SESSION_HEADERS = (
    "x-claude-code-session-id",
    "session-id",
    "x-session-id",
    "x-session-affinity",
    "x-opencode-session",
)
DEFAULT_CAPACITY = 1024
TURNS_KEPT = 64


def client_session(headers: Mapping[str, str]) -> str | None:
    for name in CLIENT_SESSION_HEADERS:
        value = headers.get(name)
        if value:
            return value.strip()[:128]
    return None


@dataclass(frozen=True, slots=True)
class Observation:
    """One request the backend accepted, as the tracker needs it."""

    key: str
    client_session: str | None
    first_user: str
    route: str
    parts: Sequence[Part]


@dataclass(slots=True)
class Change:
    """Where a broken prefix first differs."""

    label: str
    offset: int
    span: int  # 1: this byte; more: somewhere in [offset, offset + span); 0: structural
    reason: str | None  # "tools reordered", "role changed (...)", or what stands there: "a timestamp"

    def describe(self) -> str:
        if self.span == 0:
            return f"{self.reason} (at {self.label})"
        if self.span == 1:
            where = f"at byte {self.offset}"
        else:
            where = f"in bytes {self.offset}-{self.offset + self.span - 1}"
        if self.reason in _TOOL_REASONS:
            return f"{self.reason} ({self.label} differs {where})"
        return f"{self.label} changed {where}" + (f": {self.reason}" if self.reason else "")


_TOOL_REASONS = ("tools reordered", "a tool added", "a tool removed")


@dataclass(slots=True)
class Turn:
    number: int
    at: float
    route: str
    messages: int
    prompt_bytes: int
    outcome: Outcome
    kept_messages: int = 0
    kept_bytes: int = 0
    previous_bytes: int = 0
    change: Change | None = None
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    captured: bool = False
    first_break: bool = False  # the session's first: it counts as a broken session

    def usage(self, prompt: int, cached: int) -> None:
        """The backend's report for this request (summed, for a search loop's several calls)."""
        self.prompt_tokens = (self.prompt_tokens or 0) + prompt
        self.cached_tokens = (self.cached_tokens or 0) + cached


@dataclass(slots=True)
class Session:
    id: str
    key: str
    client_session: str | None
    started: float
    last_seen: float
    fingerprint: Fingerprint
    turns: deque[Turn]
    turns_total: int = 0
    breaks: int = 0


@dataclass
class SessionTracker:
    capacity: int = DEFAULT_CAPACITY
    turns_kept: int = TURNS_KEPT
    capture: Capture | None = None
    clock: Callable[[], float] = time.time
    sessions: OrderedDict[bytes, Session] = field(default_factory=OrderedDict)

    def observe(self, seen: Observation) -> Turn:
        identity = _identity(seen)
        now = self.clock()
        session = self.sessions.get(identity)
        if session is None:
            turn = self._first(seen, now)
            session = Session(
                id=identity.hex()[:12], key=seen.key, client_session=seen.client_session, started=now,
                last_seen=now, fingerprint=fingerprint(seen.parts), turns=deque(maxlen=self.turns_kept),
            )
            self.sessions[identity] = session
            if len(self.sessions) > self.capacity:
                _, evicted = self.sessions.popitem(last=False)
                if self.capture is not None:
                    self.capture.forget(evicted.id)
        else:
            self.sessions.move_to_end(identity)
            match, session.fingerprint = compare(session.fingerprint, seen.parts)
            turn = self._next(seen, now, match, session.turns_total + 1)
            session.last_seen = now
            if turn.outcome == "broken":
                session.breaks += 1
                turn.first_break = session.breaks == 1
        session.turns_total += 1
        session.turns.append(turn)
        if self.capture is not None:
            turn.captured = self.capture.keep(session.id, turn.number, seen.parts)
        return turn

    def _first(self, seen: Observation, now: float) -> Turn:
        return Turn(1, now, seen.route, _message_count(seen.parts), _bytes(seen.parts), "first")

    def _next(self, seen: Observation, now: float, match: PrefixMatch, number: int) -> Turn:
        turn = Turn(
            number, now, seen.route, _message_count(seen.parts), _bytes(seen.parts),
            "kept" if match.divergence is None else "broken",
            kept_messages=match.kept_messages, kept_bytes=match.kept_bytes, previous_bytes=match.previous_bytes,
        )
        divergence = match.divergence
        if divergence is not None:
            change = Change(divergence.label, divergence.offset, divergence.span, divergence.reason)
            if divergence.part < len(seen.parts) and divergence.reason is None:
                suspect = suspect_at(seen.parts[divergence.part].data, divergence.offset, divergence.span)
                if suspect is not None:
                    # What changed is the token standing there: it starts at its first byte.
                    turn.kept_bytes += suspect.offset - divergence.offset
                    change = Change(divergence.label, suspect.offset, 1, suspect.kind)
            turn.change = change
        return turn

    def recent(self, per_key: int, key: str | None = None) -> dict[str, list[Session]]:
        """The last `per_key` sessions of each key (or of `key`), most recent first."""
        found: dict[str, list[Session]] = {}
        for session in reversed(self.sessions.values()):
            if key is not None and session.key != key:
                continue
            listed = found.setdefault(session.key, [])
            if len(listed) < per_key:
                listed.append(session)
        return found


def _identity(seen: Observation) -> bytes:
    digest = hashlib.blake2b(digest_size=12)
    for text in (seen.key, seen.client_session or "", seen.first_user):
        encoded = text.encode("utf-8", "surrogatepass")
        digest.update(len(encoded).to_bytes(8, "little"))
        digest.update(encoded)
    return digest.digest()


def _message_count(parts: Sequence[Part]) -> int:
    return max((part.message for part in parts), default=-1) + 1


def _bytes(parts: Sequence[Part]) -> int:
    return sum(len(part.data) for part in parts)
