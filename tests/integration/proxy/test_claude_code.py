"""The official Claude Code CLI (from npm) against the filter-proxy: the client people point at
a local stack, and the one whose WebSearch showed "Did 0 searches" before the proxy ran it.

Claude Code's WebSearch tool is a second API call carrying Anthropic's `web_search` server
tool; Claude Code then reads the `server_tool_use` / `web_search_tool_result` blocks and
`usage.server_tool_use.web_search_requests` from the reply. The model side is scripted (exact
tool calls), the search side is the SearXNG stand-in; everything stays on loopback.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path

import httpx

from tests.support.npm_clients import InstalledClient
from tests.support.proxy.running import ALICE_KEY, RunningProxy
from tests.support.proxy.scripted_backend import ScriptedBackend, Turn


def run_claude(claude: InstalledClient, proxy: RunningProxy, prompt: str, home: Path) -> dict:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),  # no user config, no login: only what the environment says
        "ANTHROPIC_BASE_URL": proxy.base_url,
        "ANTHROPIC_API_KEY": ALICE_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    result = subprocess.run(
        [str(claude.executable), "-p", prompt, "--output-format", "json", "--allowedTools", "WebSearch"],
        env=env, capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert result.returncode == 0, claude.label + ": " + result.stdout[-2000:] + result.stderr[-2000:]
    return json.loads(result.stdout)


def test_claude_code_web_search_runs_through_the_proxy(
    claude_code: InstalledClient, search_proxy: RunningProxy, backend: ScriptedBackend, tmp_path: Path
) -> None:
    main, search = uuid.uuid4().hex[:10], uuid.uuid4().hex[:10]
    # The main loop: the model calls Claude Code's WebSearch tool, then answers.
    backend.script(
        main,
        [
            Turn(tool_calls=(("WebSearch", {"query": f"stackctl release script:{search}"}),)),
            Turn(text="Version 2.4 adds streaming web search."),
        ],
    )
    # WebSearch's own request (the server tool): the model searches once, then summarises.
    backend.script(
        search,
        [
            Turn(tool_calls=(("web_search", {"query": "stackctl release"}),)),
            Turn(text="Release notes 2.4 say it adds streaming web search."),
        ],
    )

    reply = run_claude(claude_code, search_proxy, f"script:{main} What is new in stackctl?", tmp_path)

    assert reply["is_error"] is False and reply["result"] == "Version 2.4 adds streaming web search."
    # Claude Code counted the search from usage.server_tool_use (not "Did 0 searches").
    assert sum(model["webSearchRequests"] for model in reply["modelUsage"].values()) == 1
    # WebSearch's request carried the server tool; the proxy offered it as a function.
    search_turns = backend.script_requests(search)
    assert [tool["function"]["name"] for tool in search_turns[0]["tools"]] == ["web_search"]
    # Claude Code parsed the web_search_tool_result blocks: titles and URLs went back to the
    # main loop as WebSearch's result.
    tool_result = backend.script_requests(main)[1]["messages"][-1]
    assert tool_result["role"] == "tool"
    assert "Release notes 2.4" in tool_result["content"]
    assert "https://docs.example.org/releases/2.4" in tool_result["content"]
    metrics = httpx.get(search_proxy.base_url + "/metrics").text
    assert 'stackctl_proxy_web_searches_total{outcome="ok"}' in metrics
