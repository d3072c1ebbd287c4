"""The admin API's wire format: `GET /admin/cache-report` (what `stackctl cache-report` shows)
and `POST /admin/capture`. No prompt text, only with a capture on: its diffs."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Outcome = Literal["first", "kept", "broken"]


class TurnReport(BaseModel):
    turn: int  # the session's request number, from 1
    at: float  # Unix time the request reached the backend
    route: str
    messages: int
    prompt_bytes: int
    outcome: Outcome  # first of its session, extends the previous request whole, or not
    kept_messages: int  # of the previous request, repeated from the first
    kept_bytes: int
    previous_bytes: int
    prompt_tokens: int | None = None  # the backend's usage report (None: none came)
    cached_tokens: int | None = None
    change: str | None = None  # where a broken prefix first differs, and what stands there
    diff: str | None = None  # with a capture: the two requests' prompts, unified diff

    @property
    def cached_share(self) -> float | None:
        if not self.prompt_tokens or self.cached_tokens is None:
            return None
        return self.cached_tokens / self.prompt_tokens


class SessionReport(BaseModel):
    id: str  # a hash: the key, the client's session header, the first user turn
    client_session: str | None = None  # the client's own session id, shortened
    started: float
    last_seen: float
    turns_total: int
    breaks: int
    turns: list[TurnReport]  # the last ones kept


class KeyReport(BaseModel):
    key: str
    sessions: list[SessionReport]


class CaptureState(BaseModel):
    active: bool = False
    until: float | None = None  # Unix time capturing stops
    kept_until: float | None = None  # Unix time the captured prompts are deleted
    directory: str | None = None  # on the proxy's host: owner-only files


class CacheReport(BaseModel):
    generated_at: float
    tracked_sessions: int
    capacity: int
    keys: list[KeyReport] = Field(default_factory=list)
    capture: CaptureState = Field(default_factory=CaptureState)


class CaptureRequest(BaseModel):
    """`minutes` > 0 captures prompts for that long (at most a day); 0 stops and deletes them."""

    minutes: float = Field(ge=0, le=24 * 60)
