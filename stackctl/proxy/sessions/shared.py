"""Sessions kept by one process for several workers: a conversation's requests may reach
different workers (each `claude -p --continue` is a new connection), so one keeper, the workers'
parent, follows every session; the workers send it what they observe and ask it for the report.

The protocol: one Unix-socket connection per worker, one JSON object a line.
  worker -> keeper: {"op": "observe", "turn": T, "key", "session", "first_user", "route",
                     "parts": [[label, message, size], ...]} then the parts' bytes, back to back
                    {"op": "usage", "turn": T, "prompt": P, "cached": C}    (no reply)
                    {"op": "report", "id": N, "sessions": S, "key": K}
                    {"op": "capture", "id": N, "minutes": M}
  keeper -> worker: {"turn": T, "key": K, "outcome": O, "first_break": B}   (each observation's)
                    {"id": N, "report": {...}} or {"id": N, "capture": {...}}
The prompt's bytes cross the socket (the keeper compares them with the previous request's
checksums, and keeps only those); a worker's own loop does no tracking work but the send. The
worker counts each outcome in its metrics (summed over the workers, metrics.py), where the
keeper's own would not be seen.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections import OrderedDict
from typing import Any

from stackctl.proxy.metrics import ProxyMetrics
from stackctl.proxy.protocol.cache_report import CacheReport, CaptureState, Outcome
from stackctl.proxy.sessions.fingerprint import Part
from stackctl.proxy.sessions.service import LocalSessions, UsageSink, count_turn
from stackctl.proxy.sessions.tracker import Observation

log = logging.getLogger("stackctl.proxy")
_TURNS_AWAITING_USAGE = 4096  # per worker: a reply's usage comes within its stream's life


class SessionKeeper:
    """Serves one process's sessions to the workers."""

    def __init__(self, sessions: LocalSessions) -> None:
        self.sessions = sessions

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        awaiting: OrderedDict[int, UsageSink] = OrderedDict()
        try:
            while line := await reader.readline():
                message = json.loads(line)
                op = message["op"]
                if op == "observe":
                    sizes = [size for _label, _message, size in message["parts"]]
                    data = await reader.readexactly(sum(sizes))
                    sink, outcome, first_break = self._observe(message, data)
                    awaiting[message["turn"]] = sink
                    if len(awaiting) > _TURNS_AWAITING_USAGE:
                        awaiting.popitem(last=False)
                    writer.write(_line({"turn": message["turn"], "key": message["key"], "outcome": outcome,
                                        "first_break": first_break}))
                elif op == "usage":
                    if message["turn"] in awaiting:
                        awaiting.pop(message["turn"])(int(message["prompt"]), int(message["cached"]))
                elif op == "report":
                    report = await self.sessions.report(int(message["sessions"]), message.get("key"))
                    writer.write(_line({"id": message["id"], "report": report.model_dump(mode="json")}))
                elif op == "capture":
                    state = await self.sessions.capture(float(message["minutes"]))
                    writer.write(_line({"id": message["id"], "capture": state.model_dump(mode="json")}))
        except (OSError, ValueError, KeyError, TypeError, asyncio.IncompleteReadError) as error:
            log.error("a worker's session channel failed: %s", error)
        finally:
            writer.close()

    def _observe(self, message: dict[str, Any], data: bytes) -> tuple[UsageSink, Outcome, bool]:
        parts, start = [], 0
        for label, owner, size in message["parts"]:
            parts.append(Part(label, owner, data[start:start + size]))
            start += size
        seen = Observation(message["key"], message["session"], message["first_user"], message["route"], parts)
        return self.sessions.observe_turn(seen)


class SharedSessions:
    """A worker's view: observations go to the keeper; reports come from it."""

    def __init__(self, keeper_path: str, metrics: ProxyMetrics) -> None:
        self.keeper_path = keeper_path
        self.metrics = metrics
        self._writer: asyncio.StreamWriter | None = None
        self._connected = asyncio.Event()
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._turns = itertools.count(1)
        self._pending: list[bytes] = []  # sent before the connection was up

    async def run(self) -> None:
        reader, self._writer = await asyncio.open_unix_connection(self.keeper_path)
        self._writer.write(b"".join(self._pending))
        self._pending.clear()
        self._connected.set()
        while line := await reader.readline():
            reply = json.loads(line)
            if "outcome" in reply:
                count_turn(self.metrics, reply["key"], reply["outcome"], reply["first_break"])
                continue
            future = self._waiting.pop(reply["id"], None)
            if future is not None and not future.done():
                future.set_result(reply)

    def observe(self, seen: Observation) -> UsageSink:
        turn = next(self._turns)
        header = {"op": "observe", "turn": turn, "key": seen.key, "session": seen.client_session,
                  "first_user": seen.first_user, "route": seen.route,
                  "parts": [[part.label, part.message, len(part.data)] for part in seen.parts]}
        self._send(_line(header) + b"".join(part.data for part in seen.parts))

        def usage(prompt: int, cached: int) -> None:
            self._send(_line({"op": "usage", "turn": turn, "prompt": prompt, "cached": cached}))

        return usage

    async def report(self, per_key: int, key: str | None) -> CacheReport:
        reply = await self._ask({"op": "report", "sessions": per_key, "key": key})
        return CacheReport.model_validate(reply["report"])

    async def capture(self, minutes: float) -> CaptureState:
        reply = await self._ask({"op": "capture", "minutes": minutes})
        return CaptureState.model_validate(reply["capture"])

    def close(self) -> None:
        """The keeper deletes captured prompts when the proxy as a whole stops."""

    async def _ask(self, message: dict[str, Any]) -> dict[str, Any]:
        await self._connected.wait()
        request_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        self._send(_line({**message, "id": request_id}))
        return await future

    def _send(self, data: bytes) -> None:
        if self._writer is None:
            self._pending.append(data)
        elif not self._writer.is_closing():
            self._writer.write(data)


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"
