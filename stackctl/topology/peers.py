"""Waiting for the hosts this one depends on: the edge for the GPU hosts' filter-proxies, a
ray-worker for its head's Ray port. Probes only; `bring_up` reports what they found."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from stackctl.topology.plan import PeerGate

POLL_INTERVAL_S = 2.0
# Once one replica serves, the others get this long before the edge starts without them (nginx
# sends their keys elsewhere until they come back).
STRAGGLER_GRACE_S = 60.0


@dataclass(frozen=True)
class PeerState:
    gate: PeerGate
    ready: bool
    detail: str


def probe_peer(gate: PeerGate, timeout_s: float = 3.0) -> PeerState:
    """One look: an http gate answers 2xx/3xx; a tcp gate accepts a connection."""
    parts = urlsplit(gate.url)
    try:
        if parts.scheme == "tcp":
            with socket.create_connection((parts.hostname or "", parts.port or 0), timeout=timeout_s):
                return PeerState(gate, True, f"{gate.url} accepts connections")
        with httpx.Client(timeout=timeout_s, trust_env=False) as client:
            response = client.get(gate.url)
        return PeerState(gate, response.status_code < 400, f"{gate.url} answered {response.status_code}")
    except (OSError, httpx.HTTPError) as error:
        return PeerState(gate, False, f"{gate.url}: {type(error).__name__}: {error}"[:200])


def wait_for_peers(gates: tuple[PeerGate, ...], timeout_s: float,
                   on_tick: Callable[[float, list[PeerState]], None] = lambda _elapsed, _states: None,
                   grace_s: float = STRAGGLER_GRACE_S) -> list[PeerState]:
    """Poll until every peer is ready; or, once some are, `grace_s` more; or `timeout_s` in all.
    Returns the last look at each."""
    started = time.monotonic()
    first_ready: float | None = None
    while True:
        states = [probe_peer(gate) for gate in gates]
        elapsed = time.monotonic() - started
        on_tick(elapsed, states)
        if all(state.ready for state in states):
            return states
        if any(state.ready for state in states) and first_ready is None:
            first_ready = elapsed
        if elapsed >= timeout_s or (first_ready is not None and elapsed - first_ready >= grace_s):
            return states
        time.sleep(POLL_INTERVAL_S)
