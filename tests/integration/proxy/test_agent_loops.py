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
from stackctl.clients.recipe import KEY_VARIABLE
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


def test_codex_runs_the_models_shell_call_and_answers(
    codex: InstalledClient, fresh_proxy: RunningProxy, backend: ScriptedBackend, tmp_path: Path
) -> None:
    key = uuid.uuid4().hex[:10]
    backend.script(key, [
        Turn(reasoning="The user wants the marker.", tool_calls=(("exec_command", {"cmd": MARKER_COMMAND}),)),
        Turn(text="The command printed marker-42."),
    ])
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    write_client_config(client_config(connection(fresh_proxy, backend), "codex", home=home))
    env = {"PATH": os.environ["PATH"], "HOME": str(home), KEY_VARIABLE: ALICE_KEY}
    # No sandbox: a test container may not allow the namespaces Codex's sandbox needs.
    done = subprocess.run(
        [str(codex.executable), "exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
         f"script:{key} run the marker command"],
        env=env, cwd=work, capture_output=True, text=True, timeout=300, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    label = codex.label
    assert done.returncode == 0, f"{label}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    items = [event["item"] for event in events if event.get("type") == "item.completed"]
    command = next(item for item in items if item.get("type") == "command_execution")
    assert command["aggregated_output"].strip() == "marker-42" and command["exit_code"] == 0, label
    assert [item["text"] for item in items if item.get("type") == "agent_message"] == ["The command printed marker-42."]
    first, second = backend.script_requests(key)
    # Codex ran the command here and sent its output back, after the model's call and reasoning.
    new = second["input"][len(first["input"]):]
    assert [item["type"] for item in new] == ["reasoning", "function_call", "function_call_output"], label
    assert new[0]["content"] == [{"type": "reasoning_text", "text": "The user wants the marker."}], label
    assert "marker-42" in new[2]["output"], label
    assert second["tools"] == first["tools"], f"{label}: the tools changed between turns"
    assert json.dumps(second["input"][: len(first["input"])]) == json.dumps(first["input"]), label
    # What Codex sends that the proxy had to handle: namespaced tools reach the model flat.
    assert {tool["type"] for tool in first["tools"]} <= {"function", "web_search", "custom"}, label
    assert any("__" in tool.get("name", "") for tool in first["tools"]), f"{label}: no namespaced tool"
    assert first["model"] == SERVED_MODEL and first["stream"] is True, label


def test_openclaw_runs_the_models_exec_call_and_answers(
    openclaw: InstalledClient, fresh_proxy: RunningProxy, backend: ScriptedBackend, tmp_path: Path
) -> None:
    key = uuid.uuid4().hex[:10]
    backend.script(key, [
        Turn(tool_calls=(("exec", {"command": MARKER_COMMAND, "title": "Print the marker"}),)),
        Turn(text="The command printed marker-42."),
    ])
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    write_client_config(client_config(connection(fresh_proxy, backend), "openclaw", home=home))
    path = os.pathsep.join([*map(str, openclaw.path), os.environ["PATH"]])
    # --local: the embedded agent, no gateway; it runs the exec call itself, unprompted.
    done = subprocess.run(
        [str(openclaw.executable), "agent", "--local", "--message", f"script:{key} run the marker command", "--json"],
        env={"PATH": path, "HOME": str(home)}, cwd=work, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    label = openclaw.label
    assert done.returncode == 0, f"{label}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    reply = json.loads(done.stdout)
    assert [payload["text"] for payload in reply["payloads"]] == ["The command printed marker-42."], label
    assert reply["meta"]["agentMeta"]["contextTokens"] == backend.window, label  # connect's contextWindow
    first, second = backend.script_requests(key)
    tool = next(message for message in second["messages"] if message["role"] == "tool")
    assert tool["content"].strip() == "marker-42", label
    # What OpenClaw sends: maxTokens as max_completion_tokens (connect: a quarter of the window).
    assert first["max_completion_tokens"] == backend.window // 4, label
    assert first["tools"] == second["tools"], label
