"""Waiting for peers, against real sockets on loopback: a serving peer, a silent one, a port."""

import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from stackctl.topology.peers import probe_peer, wait_for_peers
from stackctl.topology.plan import PeerGate


class _Health(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()

    def log_message(self, *_args) -> None:
        pass


@pytest.fixture
def serving():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Health)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_serving_peer_and_a_port_that_accepts_are_ready(serving):
    assert probe_peer(PeerGate("gpu", "filter-proxy", f"http://127.0.0.1:{serving}/health")).ready
    assert probe_peer(PeerGate("head", "ray-head", f"tcp://127.0.0.1:{serving}")).ready
    missing = probe_peer(PeerGate("gpu", "filter-proxy", f"http://127.0.0.1:{serving}/nope"))
    assert not missing.ready and "answered 404" in missing.detail


def test_a_silent_peer_is_named_with_what_was_tried():
    port = closed_port()
    state = probe_peer(PeerGate("gpu2", "filter-proxy", f"http://127.0.0.1:{port}/health"))
    assert not state.ready and f"127.0.0.1:{port}" in state.detail and "ConnectError" in state.detail


def test_once_one_replica_serves_the_others_get_a_grace_period_then_the_edge_goes_on(serving):
    gates = (PeerGate("gpu1", "filter-proxy", f"http://127.0.0.1:{serving}/health"),
             PeerGate("gpu2", "filter-proxy", f"http://127.0.0.1:{closed_port()}/health"))
    started = time.monotonic()
    states = wait_for_peers(gates, timeout_s=60, grace_s=1)
    assert [state.ready for state in states] == [True, False]
    assert time.monotonic() - started < 10  # the grace, not the whole timeout


def test_with_no_peer_serving_the_wait_ends_at_the_timeout():
    gates = (PeerGate("gpu", "filter-proxy", f"http://127.0.0.1:{closed_port()}/health"),)
    ticks = []
    states = wait_for_peers(gates, timeout_s=1, on_tick=lambda elapsed, found: ticks.append(elapsed))
    assert [state.ready for state in states] == [False] and ticks
