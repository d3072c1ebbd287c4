"""Real coding agents in a real agent loop through the filter-proxy: the model (scripted, exact
vLLM chunks) calls the agent's shell tool, the agent runs it on this machine and sends the
output back, and the final answer arrives. Configured the way `stackctl connect` configures them.

Each backend request of the loop must extend the previous one exactly (vLLM's prefix cache):
the same tools in the same order, every earlier message unchanged.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import pytest

from stackctl.clients import ClientKey, Connection, client_config
from stackctl.clients.claude_code import claude_code_env
from stackctl.proxy.settings import ProxySettings
from stackctl.usecases.connect import write_client_config
from tests.support.npm_clients import InstalledClient
from tests.support.proxy.running import ALICE_KEY, RunningProxy
from tests.support.proxy.scripted_backend import (
    SERVED_MODEL,
    ScriptedBackend,
    Turn,
    prompt_tokens,
)

pytestmark = pytest.mark.integration

MARKER_COMMAND = "echo marker-$((6*7))"  # the shell computes 42: the output can only come from running it


@pytest.fixture
def fresh_proxy(start_proxy, base_settings: ProxySettings) -> RunningProxy:  # type: ignore[no-untyped-def]
    """A proxy that has learned nothing yet, with the served name as its default model."""
    return start_proxy(replace(base_settings, aliases=(), default_model=SERVED_MODEL))


def connection(proxy: RunningProxy, backend: ScriptedBackend) -> Connection:
    return Connection(proxy.base_url, SERVED_MODEL, backend.window, ClientKey("alice", ALICE_KEY))


def text_of(message: dict) -> str:
    content = message.get("content") or ""
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


def assert_each_request_extends_the_last(requests: list[dict], label: str) -> None:
    for earlier, later in pairwise(requests):
        assert later.get("tools") == earlier.get("tools"), f"{label}: the tools changed between turns"
        head = later["messages"][: len(earlier["messages"])]
        assert json.dumps(head) == json.dumps(earlier["messages"]), f"{label}: an earlier message changed"


def test_claude_code_runs_the_models_bash_call_and_answers(
    claude_code: InstalledClient, fresh_proxy: RunningProxy, backend: ScriptedBackend, tmp_path: Path
) -> None:
    key = uuid.uuid4().hex[:10]
    backend.script(key, [
        Turn(tool_calls=(("Bash", {"command": MARKER_COMMAND, "description": "Print the marker"}),)),
        Turn(text="The command printed marker-42."),
    ])
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path),
           **claude_code_env(connection(fresh_proxy, backend), ALICE_KEY)}
    done = subprocess.run(
        [str(claude_code.executable), "-p", f"script:{key} run the marker command", "--output-format", "json",
         "--allowedTools", "Bash"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    label = claude_code.label
    assert done.returncode == 0, f"{label}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    reply = json.loads(done.stdout)
    assert reply["is_error"] is False and reply["result"] == "The command printed marker-42.", label
    first, second = backend.script_requests(key)
    # Claude Code ran the command here and sent its output back as the tool result.
    assert second["messages"][-1]["role"] == "tool" and "marker-42" in second["messages"][-1]["content"], label
    assert_each_request_extends_the_last([first, second], label)
    # What Claude Code sends that the proxy had to handle:
    system = first["messages"][0]
    assert system["role"] == "system" and not system["content"].startswith("x-anthropic-billing-header"), label
    reminders = [m for m in first["messages"][1:] if "<system-reminder>\n# Environment" in text_of(m)]
    assert [m["role"] for m in reminders] == ["user"], label  # Claude Code's inline system message
    assert "DeferredToolPlaceholder" not in [tool["function"]["name"] for tool in first["tools"]], label
    # max_tokens 32000: the window at first, then the window less the prompt once learned.
    assert first["max_tokens"] == 32000, label
    room = backend.window - prompt_tokens(second)
    assert room - 0.05 * prompt_tokens(second) - 40 <= second["max_tokens"] <= room, label


def test_opencode_runs_the_models_bash_call_and_answers(
    opencode: InstalledClient, fresh_proxy: RunningProxy, backend: ScriptedBackend, tmp_path: Path
) -> None:
    key = uuid.uuid4().hex[:10]
    backend.script(key, [
        Turn(tool_calls=(("bash", {"command": MARKER_COMMAND, "description": "Print the marker"}),)),
        Turn(text="The command printed marker-42."),
    ])
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    write_client_config(client_config(connection(fresh_proxy, backend), "opencode", home=home))
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "OPENCODE_DISABLE_AUTOUPDATE": "1",
           "OPENCODE_DISABLE_MODELS_FETCH": "1"}
    # --auto: no one is there to approve the shell call; --title: no title request of its own.
    done = subprocess.run(
        [str(opencode.executable), "run", f"script:{key} run the marker command", "--format", "json", "--auto",
         "--title", "agent loop"],
        env=env, cwd=work, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    label = opencode.label
    assert done.returncode == 0, f"{label}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    tool = next(event["part"] for event in events if event["type"] == "tool_use")
    assert tool["tool"] == "bash" and tool["state"]["output"].strip() == "marker-42", label
    texts = [event["part"]["text"] for event in events if event["type"] == "text"]
    assert texts[-1] == "The command printed marker-42.", label
    first, second = backend.script_requests(key)
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": tool["callID"], "content": "marker-42\n"}, label
    assert_each_request_extends_the_last([first, second], label)
    # opencode asks limit.output (connect: a quarter of the window); the proxy fits it.
    assert first["max_tokens"] == backend.window // 4 and second["max_tokens"] <= backend.window // 4, label
