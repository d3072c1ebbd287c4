"""`connect`: each client's configuration from a real stack directory (stack.yaml + .env), the
key kept out of what is printed, files merged and written owner-only."""

from __future__ import annotations

import json
import stat
import tomllib
from pathlib import Path

import pytest

import stackctl.clients
from stackctl.clients import RECIPES, client_config
from stackctl.errors import ConfigError
from stackctl.layout import StackLayout
from stackctl.stack import Stack
from stackctl.usecases.connect import ConnectError, connection_of, try_line, write_client_config
from stackctl.usecases.endpoint import endpoint_of
from stackctl.usecases.init_stack import init_stack
from tests.support.stack_builder import first_client_key


def test_the_connection_is_the_lan_endpoint_the_key_the_model_and_its_window(demo):
    connection = connection_of(demo, host="10.1.2.3")
    assert connection.base_url == "http://10.1.2.3:8080" and connection.openai_base_url.endswith(":8080/v1")
    assert connection.model == "tiny" and connection.context_tokens == demo.vllm.max_model_len
    assert connection.key.name == "default" and connection.key.value == first_client_key(demo)
    assert first_client_key(demo) not in repr(connection)


def test_a_tls_stack_is_reached_by_its_hostname(tmp_path):
    layout = StackLayout(tmp_path / "tls")
    init_stack(layout, {"hardware": "rtx-pro-6000", "model": "qwen3-32b", "hostname": "llm.example.org",
                        "services": {"tls": True}})
    assert connection_of(Stack.load(layout)).base_url == "https://llm.example.org"


def test_an_unknown_key_name_lists_the_ones_there(demo):
    with pytest.raises(ConfigError, match="no client key named 'ci'.*the keys there: default"):
        connection_of(demo, key_name="ci")


def test_claude_code_gets_every_model_name_and_the_window(demo, tmp_path):
    config = client_config(connection_of(demo, host="h"), "claude-code", home=tmp_path)
    assert config.env == {
        "ANTHROPIC_BASE_URL": "http://h:8080",
        "ANTHROPIC_AUTH_TOKEN": first_client_key(demo),
        "ANTHROPIC_MODEL": "tiny",
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": "tiny",
        "ANTHROPIC_DEFAULT_SONNET_MODEL": "tiny",
        "ANTHROPIC_DEFAULT_OPUS_MODEL": "tiny",
        "CLAUDE_CODE_AUTO_COMPACT_WINDOW": str(demo.vllm.max_model_len),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    assert config.path == tmp_path / ".claude" / "settings.json"


def test_opencode_and_openclaw_carry_the_context_limits(demo, tmp_path):
    connection = connection_of(demo, host="h")
    opencode = client_config(connection, "opencode", home=tmp_path).document
    provider = opencode["provider"]["stackctl"]
    assert provider["npm"] == "@ai-sdk/openai-compatible" and provider["options"]["baseURL"] == "http://h:8080/v1"
    assert provider["models"]["tiny"]["limit"] == {"context": 131072, "output": 32768}
    assert opencode["model"] == opencode["small_model"] == "stackctl/tiny"
    openclaw = client_config(connection, "openclaw", home=tmp_path).document
    entry = openclaw["models"]["providers"]["stackctl"]
    assert entry["api"] == "openai-completions" and entry["baseUrl"] == "http://h:8080/v1"
    assert (entry["models"][0]["contextWindow"], entry["models"][0]["maxTokens"]) == (131072, 32768)
    assert openclaw["agents"]["defaults"]["model"]["primary"] == "stackctl/tiny"


@pytest.mark.parametrize("client", ["claude-code", "opencode", "openclaw", "openai", "anthropic"])
def test_the_key_is_printed_only_when_asked(demo, client):
    config = client_config(connection_of(demo, host="h"), client)
    assert first_client_key(demo) not in config.text(show_key=False)
    assert "--show-key prints it" in config.text(show_key=False)
    assert first_client_key(demo) in config.text(show_key=True)


def test_writing_merges_into_the_users_file_and_keeps_it_private(demo, tmp_path):
    connection = connection_of(demo, host="h")
    target = tmp_path / "opencode.json"
    target.write_text(json.dumps({"theme": "dark", "provider": {"other": {"npm": "x"},
                                                                "stackctl": {"models": {"old": {}}}}}))
    written = write_client_config(client_config(connection, "opencode"), target)
    document = json.loads(target.read_text())
    assert not written.created and document["theme"] == "dark" and document["provider"]["other"] == {"npm": "x"}
    assert list(document["provider"]["stackctl"]["models"]) == ["tiny"]  # the old entry replaced whole
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"env": {"EDITOR": "vim"}, "permissions": {"allow": ["Bash(ls)"]}}))
    write_client_config(client_config(connection, "claude-code"), settings)
    merged = json.loads(settings.read_text())
    assert merged["env"]["EDITOR"] == "vim" and merged["env"]["ANTHROPIC_MODEL"] == "tiny"
    assert merged["permissions"] == {"allow": ["Bash(ls)"]}


def test_sdk_variables_are_written_as_a_sourceable_file(demo, tmp_path):
    written = write_client_config(client_config(connection_of(demo, host="h"), "openai", home=tmp_path))
    assert written.created and written.path == tmp_path / ".config" / "stackctl" / "openai.env"
    assert written.path.read_text() == f"OPENAI_BASE_URL=http://h:8080/v1\nOPENAI_API_KEY={first_client_key(demo)}\n"
    assert stat.S_IMODE(written.path.stat().st_mode) == 0o600


def test_a_file_that_is_not_json_is_left_alone(demo, tmp_path):
    target = tmp_path / "openclaw.json"
    target.write_text("{ // JSON5 with comments\n}")
    with pytest.raises(ConnectError, match="not plain JSON.*add the printed entry by hand"):
        write_client_config(client_config(connection_of(demo, host="h"), "openclaw"), target)
    assert target.read_text().startswith("{ // JSON5")


def test_up_prints_a_curl_line_that_only_needs_the_key(demo):
    line = try_line(endpoint_of(demo))
    assert line.startswith("curl -s http://127.0.0.1:8080/v1/chat/completions ")
    assert '"Authorization: Bearer $KEY"' in line


def test_codex_gets_a_responses_provider_the_model_and_its_window(demo, tmp_path):
    config = client_config(connection_of(demo, host="h"), "codex", home=tmp_path)
    printed = config.text(show_key=False)
    settings = tomllib.loads(printed.split("\n# and in the shell")[0])
    window = demo.vllm.max_model_len
    assert settings == {
        "model": "tiny", "model_provider": "stackctl", "model_context_window": window,
        "model_auto_compact_token_limit": window - min(32768, window // 4),
        "model_providers": {"stackctl": {"name": "stackctl", "base_url": "http://h:8080/v1",
                                         "env_key": "STACKCTL_API_KEY", "wire_api": "responses"}},
    }  # fmt: skip
    assert first_client_key(demo) not in printed and "export STACKCTL_API_KEY=" in printed
    assert f"export STACKCTL_API_KEY={first_client_key(demo)}" in config.text(show_key=True)
    assert config.path == tmp_path / ".codex" / "config.toml" and not config.file_holds_key


def test_codex_settings_merge_into_the_users_config_toml_comments_and_all(demo, tmp_path):
    target = tmp_path / ".codex" / "config.toml"
    target.parent.mkdir()
    target.write_text('# my Codex\napproval_policy = "on-request"  # asked each time\nmodel = "gpt-5"\n\n'
                      '[model_providers.stackctl]\nname = "old"\nrequest_max_retries = 9\n\n'
                      '[model_providers.other]\nbase_url = "https://other/v1"\n')
    config = client_config(connection_of(demo, host="h"), "codex", home=tmp_path)
    assert write_client_config(config).created is False
    text = target.read_text()
    assert text.startswith('# my Codex\napproval_policy = "on-request"  # asked each time\nmodel = "tiny"\n')
    written = tomllib.loads(text)
    assert written["model_provider"] == "stackctl" and written["model_providers"]["other"] == {"base_url": "https://other/v1"}
    assert written["model_providers"]["stackctl"]["wire_api"] == "responses"
    assert "request_max_retries" not in written["model_providers"]["stackctl"]  # the entry is written whole
    assert first_client_key(demo) not in text and stat.S_IMODE(target.stat().st_mode) == 0o600
    target.write_text("model = [unclosed\n")
    with pytest.raises(ConnectError, match="is not valid TOML"):
        write_client_config(config)
    assert target.read_text() == "model = [unclosed\n"


def test_every_client_module_is_a_registered_recipe(demo):
    # Adding a client is adding its module to stackctl/clients/ and its line in RECIPES.
    folder = Path(stackctl.clients.__file__).parent
    modules = {path.stem for path in folder.glob("*.py")} - {"__init__", "config_file", "connection", "recipe"}
    assert {type(recipe).__module__.rsplit(".", 1)[1] for recipe in RECIPES.values()} == modules
    assert all(name == recipe.name for name, recipe in RECIPES.items())
    with pytest.raises(ConfigError, match="unknown client 'cursor'; one of: claude-code, opencode, openclaw"):
        client_config(connection_of(demo, host="h"), "cursor")
