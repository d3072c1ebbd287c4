"""What the TLS test runs besides nginx and certbot: pebble (Let's Encrypt's test CA), a tiny DNS
server that points the test domain at 127.0.0.1 for pebble's validation, and an SSE backend
whose pauses the test controls."""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import subprocess
import threading
import time
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route


class LoopbackDns:
    """Answers A queries for one name with 127.0.0.1 (UDP, loopback only); other names: NXDOMAIN.

    pebble resolves the domain through it (`-dnsserver`) and then fetches the HTTP-01 challenge
    from nginx for real: no validation is skipped."""

    def __init__(self, name: str) -> None:
        self.name = name.lower().rstrip(".")
        self.queries: list[tuple[str, int]] = []
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self.port = self._sock.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def start(self) -> LoopbackDns:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                packet, client = self._sock.recvfrom(512)
            except TimeoutError:
                continue
            except OSError:
                return
            reply = self.answer(packet)
            if reply:
                self._sock.sendto(reply, client)

    def answer(self, packet: bytes) -> bytes | None:
        if len(packet) < 12:
            return None
        query_id, flags = struct.unpack("!HH", packet[:4])
        labels, offset = [], 12
        while offset < len(packet) and packet[offset]:
            length = packet[offset]
            labels.append(packet[offset + 1:offset + 1 + length].decode("ascii", "replace"))
            offset += 1 + length
        qtype, _qclass = struct.unpack("!HH", packet[offset + 1:offset + 5])
        question = packet[12:offset + 5]
        name = ".".join(labels).lower()
        self.queries.append((name, qtype))
        ours = name == self.name
        answers = b""
        if ours and qtype == 1:  # A
            answers = struct.pack("!HHHIH", 0xC00C, 1, 1, 60, 4) + socket.inet_aton("127.0.0.1")
        rcode = 0 if ours else 3  # NOERROR (AAAA: no data) / NXDOMAIN
        header = struct.pack("!HHHHHH", query_id, 0x8400 | (flags & 0x0100) | rcode, 1, 1 if answers else 0, 0, 0)
        return header + question + answers


def make_tls_material(directory: Path) -> tuple[Path, Path, Path]:
    """A CA and a certificate for 127.0.0.1/localhost signed by it: pebble's own HTTPS listener."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca_cert = directory / "ca.key", directory / "ca.pem"
    key, csr, cert = directory / "pebble.key", directory / "pebble.csr", directory / "pebble.pem"
    ext = directory / "san.ext"
    ext.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=stackctl test CA",
            "-keyout", str(ca_key), "-out", str(ca_cert))
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", str(key), "-out", str(csr))
    openssl("x509", "-req", "-in", str(csr), "-CA", str(ca_cert), "-CAkey", str(ca_key), "-CAcreateserial",
            "-days", "2", "-extfile", str(ext), "-out", str(cert))
    return ca_cert, cert, key


def pebble_config(path: Path, *, listen_port: int, management_port: int, http_port: int, tls_port: int,
                  cert: Path, key: Path) -> Path:
    path.write_text(json.dumps({"pebble": {
        "listenAddress": f"127.0.0.1:{listen_port}",
        "managementListenAddress": f"127.0.0.1:{management_port}",
        "certificate": str(cert),
        "privateKey": str(key),
        "httpPort": http_port,  # where pebble fetches HTTP-01 challenges: nginx's HTTP port
        "tlsPort": tls_port,
        "ocspResponderURL": "",
        "externalAccountBindingRequired": False,
    }}))
    return path


class SseBackend:
    """An OpenAI-style streaming backend: event 1 at once, then `pause=S` seconds of silence (no
    bytes at all: no keep-alive comment), then event 2 and [DONE]. Records when each was sent."""

    def __init__(self) -> None:
        self.sent: dict[str, dict[str, float]] = {}
        self.app = Starlette(routes=[
            Route("/v1/models", self.models, methods=["GET"]),
            Route("/v1/chat/completions", self.chat, methods=["POST"]),
            Route("/health", self.health, methods=["GET"]),
        ])

    async def health(self, request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    async def models(self, request: Request) -> JSONResponse:
        return JSONResponse({"object": "list", "data": [{"id": "sse-test", "object": "model", "owned_by": "test"}]})

    async def chat(self, request: Request) -> StreamingResponse:
        body = await request.json()
        text = body["messages"][-1]["content"]
        tag, pause = text.split()[0], float(text.split("pause=")[1])
        times = self.sent.setdefault(tag, {})

        def chunk(content: str | None, finish: str | None = None) -> bytes:
            delta = {"content": content} if content is not None else {}
            event = {"id": f"chatcmpl-{tag}", "object": "chat.completion.chunk", "created": int(time.time()),
                     "model": "sse-test", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            return f"data: {json.dumps(event)}\n\n".encode()

        async def events():
            times["first"] = time.monotonic()
            yield chunk("first")
            await asyncio.sleep(pause)
            times["second"] = time.monotonic()
            yield chunk("second", "stop")
            yield b"data: [DONE]\n\n"
            times["done"] = time.monotonic()

        return StreamingResponse(events(), media_type="text/event-stream")
