"""A stand-in Hugging Face Hub on loopback: the few routes the real `huggingface_hub` client uses
to download a repository (repo info, tree listing, HEAD/GET `resolve` with Range), serving small
repos the tests build. Point the client at it with HF_ENDPOINT.

It records every request line and header it saw, so tests can show a token never travels in a
URL, and it can throttle file bodies (to interrupt a download half-way) or end them early.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit


@dataclass
class FakeRepo:
    files: dict[str, bytes]
    gated: bool = False
    commit: str = "1" * 40

    def etag(self, name: str) -> str:
        return hashlib.sha256(self.files[name]).hexdigest() if name.endswith(".safetensors") else \
            hashlib.sha1(self.files[name]).hexdigest()


@dataclass
class FakeHub:
    repos: dict[str, FakeRepo]
    token: str  # the one token that opens gated repos
    url: str = ""
    # Seconds to sleep per 64 KiB of a file body (0: full speed).
    throttle_s: float = 0.0
    requests: list[str] = field(default_factory=list)
    headers_seen: list[dict[str, str]] = field(default_factory=list)
    bytes_served: int = 0


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # quiet
            return

        def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None, *,
                  head: bool = False) -> None:
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            if "Content-Length" not in (headers or {}):
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def _error(self, status: int, code: str, message: str, *, head: bool = False) -> None:
            body = json.dumps({"error": message}).encode()
            self._send(status, body, {"X-Error-Code": code, "X-Error-Message": message,
                                      "Content-Type": "application/json"}, head=head)

        def _repo(self, repo_id: str, *, head: bool = False) -> FakeRepo | None:
            repo = hub.repos.get(repo_id)
            if repo is None:
                self._error(404, "RepoNotFound", "Repository not found", head=head)
                return None
            if repo.gated and self.headers.get("Authorization") != f"Bearer {hub.token}":
                self._error(401, "GatedRepo", f"Access to model {repo_id} is restricted. You must have access to it "
                            "and be authenticated to access it. Please log in.", head=head)
                return None
            return repo

        def _record(self) -> None:
            hub.requests.append(f"{self.command} {self.path}")
            hub.headers_seen.append({key.lower(): value for key, value in self.headers.items()})

        def do_HEAD(self) -> None:
            self._record()
            self._resolve(head=True)

        def do_GET(self) -> None:
            self._record()
            path = unquote(urlsplit(self.path).path)
            if path.startswith("/api/models/"):
                self._api(path.removeprefix("/api/models/"))
            else:
                self._resolve(head=False)

        def _api(self, rest: str) -> None:
            if "/tree/" in rest:
                repo_id = rest.split("/tree/")[0]
                repo = self._repo(repo_id)
                if repo:
                    listing = [{"type": "file", "path": name, "size": len(data), "oid": repo.etag(name),
                                **({"lfs": {"size": len(data), "oid": repo.etag(name), "pointerSize": 134}}
                                   if name.endswith(".safetensors") else {})}
                               for name, data in sorted(repo.files.items())]
                    self._send(200, json.dumps(listing).encode(), {"Content-Type": "application/json"})
                return
            repo_id = rest.split("/revision/")[0]
            repo = self._repo(repo_id)
            if repo:
                info = {"id": repo_id, "modelId": repo_id, "sha": repo.commit, "private": False,
                        "gated": "manual" if repo.gated else False,
                        "siblings": [{"rfilename": name} for name in sorted(repo.files)]}
                self._send(200, json.dumps(info).encode(), {"Content-Type": "application/json"})

        def _resolve(self, *, head: bool) -> None:
            path = unquote(urlsplit(self.path).path).lstrip("/")
            parts = path.split("/")
            if len(parts) < 5 or parts[2] != "resolve":
                self._error(404, "EntryNotFound", "not a resolve URL", head=head)
                return
            repo_id, filename = "/".join(parts[:2]), "/".join(parts[4:])
            repo = self._repo(repo_id, head=head)
            if repo is None:
                return
            data = repo.files.get(filename)
            if data is None:
                self._error(404, "EntryNotFound", f"{filename} does not exist", head=head)
                return
            headers = {"X-Repo-Commit": repo.commit, "ETag": f'"{repo.etag(filename)}"',
                       "Content-Type": "application/octet-stream", "Accept-Ranges": "bytes"}
            if filename.endswith(".safetensors"):
                headers |= {"X-Linked-Etag": f'"{repo.etag(filename)}"', "X-Linked-Size": str(len(data))}
            start = 0
            requested = self.headers.get("Range", "")
            if requested.startswith("bytes=") and not head:
                start = int(requested.removeprefix("bytes=").split("-")[0] or 0)
                headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
            body = data[start:]
            headers["Content-Length"] = str(len(body))
            self.send_response(206 if start else 200)
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            if head:
                return
            for offset in range(0, len(body), 65536):
                try:
                    self.wfile.write(body[offset:offset + 65536])
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return
                hub.bytes_served += len(body[offset:offset + 65536])
                if hub.throttle_s:
                    time.sleep(hub.throttle_s)

    return Handler


@contextmanager
def running_hub(hub: FakeHub) -> Iterator[FakeHub]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    server.daemon_threads = True
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()


def tiny_repo(config: dict, *, shards: int = 2, shard_bytes: int | list[int] = 256 * 1024, gated: bool = False,
              seed: int = 0) -> FakeRepo:
    """A small model repository: config.json, tokenizer files and N safetensors-named shards of
    deterministic bytes (content is irrelevant to a download); `shard_bytes` may size each one."""
    sizes = shard_bytes if isinstance(shard_bytes, list) else [shard_bytes] * shards
    shards = len(sizes)
    files = {"config.json": json.dumps(config, indent=2).encode(),
             "tokenizer_config.json": json.dumps({"chat_template": "{{ messages }}<think>"}).encode(),
             "generation_config.json": b'{"do_sample": true}'}
    for index in range(shards):
        block = hashlib.sha256(f"{seed}-{index}".encode()).digest()
        size = sizes[index]
        files[f"model-{index + 1:05d}-of-{shards:05d}.safetensors"] = (block * (size // len(block) + 1))[:size]
    total = sum(len(data) for name, data in files.items() if name.endswith(".safetensors"))
    files["model.safetensors.index.json"] = json.dumps({"metadata": {"total_size": total}, "weight_map": {}}).encode()
    return FakeRepo(files, gated=gated)
