"""A client of the filter-proxy's admin API (`/admin/cache-report`, `/admin/capture`), as the
orchestration sees it: the proxy answers over HTTP, its JSON is read into the models below.

The orchestration never imports the proxy (it ships alone): these models are the CLI's reading
of the wire format the proxy writes (stackctl/proxy/protocol/cache_report.py), field for field
(tests/unit/test_cache_report_wire.py holds the two together). The admin API takes the backend
key (VLLM_API_KEY), which the stack's .env holds.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stackctl.errors import StackError

TIMEOUT_S = 10.0


class _Read(BaseModel):
    model_config = ConfigDict(extra="ignore")


class TurnFigures(_Read):
    turn: int
    at: float
    route: str
    messages: int
    prompt_bytes: int
    outcome: Literal["first", "kept", "broken"]
    kept_messages: int
    kept_bytes: int
    previous_bytes: int
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    change: str | None = None
    diff: str | None = None

    @property
    def cached_share(self) -> float | None:
        if not self.prompt_tokens or self.cached_tokens is None:
            return None
        return self.cached_tokens / self.prompt_tokens


class SessionFigures(_Read):
    id: str
    client_session: str | None = None
    started: float
    last_seen: float
    turns_total: int
    breaks: int
    turns: list[TurnFigures]


class KeySessions(_Read):
    key: str
    sessions: list[SessionFigures]


class CaptureState(_Read):
    active: bool = False
    until: float | None = None
    kept_until: float | None = None
    directory: str | None = None


class CacheReport(_Read):
    generated_at: float
    tracked_sessions: int
    capacity: int
    keys: list[KeySessions] = Field(default_factory=list)
    capture: CaptureState = Field(default_factory=CaptureState)


class ProxyAdminError(StackError):
    """The proxy's admin API could not be asked, or refused; the message says why."""


def fetch_report(address: str, admin_key: str, *, sessions: int, key: str | None) -> CacheReport:
    params: dict[str, Any] = {"sessions": sessions, **({"key": key} if key else {})}
    return _read(CacheReport, _call(address, admin_key, "GET", "/admin/cache-report", params=params), address)


def switch_capture(address: str, admin_key: str, minutes: float) -> CaptureState:
    """Capture for `minutes` from now; 0 stops and deletes what was captured."""
    return _read(CaptureState, _call(address, admin_key, "POST", "/admin/capture", body={"minutes": minutes}), address)


Model = TypeVar("Model", bound=BaseModel)


def _read(model: type[Model], document: Any, address: str) -> Model:
    try:
        return model.model_validate(document)
    except ValidationError as error:
        problem = error.errors()[0]
        raise ProxyAdminError(f"the filter-proxy at {address} answered an unexpected report "
                              f"({'.'.join(map(str, problem['loc']))}: {problem['msg']})") from None


def _call(address: str, admin_key: str, method: str, path: str, *, params: dict[str, Any] | None = None,
          body: dict[str, Any] | None = None) -> Any:
    url = f"http://{address}{path}"
    try:
        with httpx.Client(timeout=httpx.Timeout(TIMEOUT_S, connect=2.0), trust_env=False) as client:
            reply = client.request(method, url, params=params, json=body,
                                   headers={"authorization": f"Bearer {admin_key}"})
    except httpx.HTTPError as error:
        raise ProxyAdminError(
            f"the filter-proxy at {address} does not answer ({type(error).__name__}): is the stack up? "
            "(`stackctl status`; `stackctl up` starts it)"
        ) from None
    if reply.status_code == 404:
        raise ProxyAdminError(
            f"the filter-proxy at {address} has no {path}: it predates the cache report; "
            "`stackctl up` after upgrading stackctl restarts it with the new one"
        )
    try:
        document = reply.json()
    except ValueError:
        document = None
    if reply.status_code != 200:
        message = _error_message(document) or reply.text[:300]
        raise ProxyAdminError(f"the filter-proxy at {address} refused {method} {path} ({reply.status_code}): {message}")
    if document is None:
        raise ProxyAdminError(f"the filter-proxy at {address} answered {path} with something other than JSON")
    return document


def _error_message(document: Any) -> str | None:
    error = document.get("error") if isinstance(document, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) else None
