"""The admission gate: per-key limits (rate_limits.py) and back-pressure (backend/queue_watch.py)
in one place, answered in this process (`LocalGate`) or, with several workers, by the one keeper
that all of them ask (`SharedGate`, served by workers.py), so a limit holds across workers.

The keeper's protocol: one Unix-socket connection per worker, one JSON object a line.
  worker -> keeper: {"op": "admit", "id": N, "key": NAME}
                    {"op": "reserve", "ticket": T, "bytes": B}   (no reply)
                    {"op": "release", "ticket": T, "tokens": K}  (no reply)
  keeper -> worker: {"id": N, "ticket": T} or {"id": N, "refused": {"kind", "message", "reason",
                    "retry_after_s"}}
A worker that goes away releases everything it held (the keeper sees its connection close).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import signal
from typing import Any, Protocol

from stackctl.proxy.backend.queue_watch import BackendQueueWatch
from stackctl.proxy.errors import Overloaded, RateLimited, Rejected
from stackctl.proxy.rate_limits import KeyLimiter

log = logging.getLogger("stackctl.proxy")


class Admitted(Protocol):
    """One admitted request: `reserve` its prompt estimate, `release` exactly once at the end."""

    def reserve(self, body_bytes: int) -> None: ...

    def release(self, reported_tokens: int) -> None: ...


class AdmissionGate(Protocol):
    async def admit(self, key: str) -> Admitted:
        """A slot for one generating request of `key`; raises RateLimited or Overloaded."""
        ...

    async def run(self) -> None:
        """The gate's background work, for the app's lifetime (cancelled at shutdown)."""
        ...


class LocalGate:
    """The limits and the queue watch of this process."""

    def __init__(self, limiter: KeyLimiter, queue: BackendQueueWatch) -> None:
        self.limiter = limiter
        self.queue = queue

    def admit_now(self, key: str) -> Admitted:
        self.queue.check()
        return self.limiter.admit(key)

    async def admit(self, key: str) -> Admitted:
        return self.admit_now(key)

    async def run(self) -> None:
        if self.queue.enabled:
            await self.queue.run()


# ---- the keeper (in the parent of the workers) and its clients (the workers) ----------------------


class GateKeeper:
    """Serves a LocalGate to the workers over a Unix socket."""

    def __init__(self, gate: LocalGate) -> None:
        self.gate = gate
        self._tickets = itertools.count(1)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held: dict[int, Admitted] = {}
        try:
            while line := await reader.readline():
                message = json.loads(line)
                op = message["op"]
                if op == "admit":
                    writer.write(self._admit(message, held))
                elif op == "reserve" and message["ticket"] in held:
                    held[message["ticket"]].reserve(message["bytes"])
                elif op == "release" and message["ticket"] in held:
                    held.pop(message["ticket"]).release(message["tokens"])
        except (OSError, ValueError, KeyError) as error:
            log.error("a worker's admission channel failed: %s", error)
        finally:
            for admitted in held.values():  # the worker is gone, and its requests with it
                admitted.release(0)
            writer.close()

    def _admit(self, message: dict[str, Any], held: dict[int, Admitted]) -> bytes:
        try:
            admitted = self.gate.admit_now(str(message["key"]))
        except Rejected as refused:
            reply: dict[str, Any] = {"id": message["id"], "refused": {
                "kind": "overloaded" if isinstance(refused, Overloaded) else "rate_limited",
                "message": refused.message, "reason": refused.reason, "retry_after_s": refused.retry_after_s}}
        else:
            ticket = next(self._tickets)
            held[ticket] = admitted
            reply = {"id": message["id"], "ticket": ticket}
        return json.dumps(reply).encode() + b"\n"


class SharedGate:
    """A worker's gate: every admission asks the keeper (one round trip on a Unix socket, per
    request; nothing per token)."""

    def __init__(self, keeper_path: str) -> None:
        self.keeper_path = keeper_path
        self._writer: asyncio.StreamWriter | None = None
        self._connected = asyncio.Event()
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)

    async def run(self) -> None:
        reader, self._writer = await asyncio.open_unix_connection(self.keeper_path)
        self._connected.set()
        try:
            while line := await reader.readline():
                reply = json.loads(line)
                future = self._waiting.pop(reply["id"], None)
                if future is not None and not future.done():
                    future.set_result(reply)
        finally:
            if not asyncio.current_task().cancelling():  # type: ignore[union-attr]
                # The keeper (our parent) is gone: limits can no longer be kept; stop serving.
                log.error("the filter-proxy's worker lost its parent process; stopping")
                os.kill(os.getpid(), signal.SIGTERM)

    async def admit(self, key: str) -> Admitted:
        await self._connected.wait()
        assert self._writer is not None
        request_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        self._send({"op": "admit", "id": request_id, "key": key})
        reply = await future
        refused = reply.get("refused")
        if refused is not None:
            error_class = Overloaded if refused["kind"] == "overloaded" else RateLimited
            raise error_class(refused["message"], reason=refused["reason"],
                              retry_after_s=refused["retry_after_s"])
        return _KeptAdmission(self, int(reply["ticket"]))

    def _send(self, message: dict[str, Any]) -> None:
        if self._writer is not None and not self._writer.is_closing():
            self._writer.write(json.dumps(message).encode() + b"\n")


class _KeptAdmission:
    def __init__(self, gate: SharedGate, ticket: int) -> None:
        self._gate = gate
        self._ticket = ticket
        self._released = False

    def reserve(self, body_bytes: int) -> None:
        self._gate._send({"op": "reserve", "ticket": self._ticket, "bytes": body_bytes})

    def release(self, reported_tokens: int) -> None:
        if not self._released:
            self._released = True
            self._gate._send({"op": "release", "ticket": self._ticket, "tokens": reported_tokens})
