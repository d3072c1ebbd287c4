"""`launch`: each client's run set up from a real stack directory, the key never in an argument,
nothing written to the user's files; one-line refusals when the client or the stack is missing."""

from __future__ import annotations

import json
import tomllib

import pytest
import yaml

from stackctl.clients.claude_code import claude_code_env
from stackctl.clients.codex import codex_document
from stackctl.layout import StackLayout
from stackctl.stack import Stack
from stackctl.usecases.init_stack import DEMO_CHOICES, init_stack
from stackctl.usecases.launch import (
    LaunchError,
    launch_lines,
    launch_plan,
    local_connection,
    run_client,
)
from tests.support.processes import free_port
from tests.support.stack_builder import first_client_key


@pytest.mark.parametrize("client", ["claude", "codex", "opencode", "openclaw"])
def test_the_key_is_in_the_environment_never_in_an_argument_or_a_file(demo, client):
    launch = launch_plan(demo, client, ["--version"])
    key = first_client_key(demo)
    assert launch.argv[0] == client and launch.argv[-1] == "--version"
    assert key not in " ".join(launch.argv) and all(key not in content for content in launch.files.values())
    assert any(key in value for value in launch.env.values())


def test_each_client_reaches_the_stack_on_this_machine(demo):
    connection = local_connection(demo)
    assert connection.base_url == "http://127.0.0.1:8080"  # loopback: what works here
    assert launch_plan(demo, "claude", []).env == claude_code_env(connection, first_client_key(demo))
    codex = launch_plan(demo, "codex", ["exec", "hi"])
    pairs = codex.argv[1:-2]
    assert pairs[::2] == ["-c"] * (len(pairs) // 2)
    overrides = tomllib.loads("\n".join(pairs[1::2]))
    assert overrides == codex_document(connection) and codex.env == {"STACKCTL_API_KEY": first_client_key(demo)}
    opencode = json.loads(launch_plan(demo, "opencode", []).env["OPENCODE_CONFIG_CONTENT"])
    provider = opencode["provider"]["stackctl"]
    assert provider["options"] == {"baseURL": "http://127.0.0.1:8080/v1", "apiKey": first_client_key(demo)}
    assert opencode["model"] == "stackctl/tiny"
    openclaw = launch_plan(demo, "openclaw", [])
    assert openclaw.env["OPENCLAW_CONFIG_PATH"] == "{dir}/openclaw.json"
    entry = json.loads(openclaw.files["openclaw.json"])["models"]["providers"]["stackctl"]
    assert entry["apiKey"] == "${STACKCTL_API_KEY}" and entry["baseUrl"] == "http://127.0.0.1:8080/v1"
    assert entry["models"][0]["contextWindow"] == demo.vllm.max_model_len


def test_a_client_not_installed_gets_how_to_install_it(demo):
    with pytest.raises(LaunchError, match=r"^codex is not installed here \(not on PATH\): npm install -g @openai/codex$"):
        run_client(demo, "codex", [], environ={"PATH": "/nonexistent"})


def test_a_stack_that_is_not_up_gets_stackctl_up(tmp_path):
    layout = StackLayout(tmp_path / "stack")
    init_stack(layout, dict(DEMO_CHOICES))
    config = yaml.safe_load(layout.stack_file.read_text())
    config.setdefault("ports", {})["http"] = free_port()  # nothing listens there
    layout.stack_file.write_text(yaml.safe_dump(config))
    fake = tmp_path / "bin" / "claude"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    with pytest.raises(LaunchError, match=r"^the stack is not up \(.* does not answer: .*\): run `stackctl up`$"):
        run_client(Stack.load(layout), "claude", [], environ={"PATH": str(fake.parent), "HOME": str(tmp_path)})


def test_up_names_one_launch_line_per_client():
    assert launch_lines("stackctl -C demo") == {
        "Claude Code": "stackctl -C demo launch claude",
        "Codex": "stackctl -C demo launch codex",
        "opencode": "stackctl -C demo launch opencode",
        "OpenClaw": "stackctl -C demo launch openclaw",
    }
