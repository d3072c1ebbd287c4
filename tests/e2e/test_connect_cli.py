"""`stackctl connect` through the real CLI: the key only where asked for, one-line errors,
configs written into the user's files (HOME of the test)."""

import json
import stat

from stackctl.envfile import read_env
from tests.support.cli import run_cli


def demo_stack(tmp_path):
    assert run_cli("init", "--demo", cwd=tmp_path).returncode == 0
    return read_env(tmp_path / ".env")["STACKCTL_PROXY_KEYS"].split("=", 1)[1]


def test_printed_configs_hide_the_key_unless_asked(tmp_path):
    key = demo_stack(tmp_path)
    for client in ("claude-code", "opencode", "openclaw", "codex", "openai", "anthropic"):
        hidden = run_cli("connect", client, "--host", "127.0.0.1", cwd=tmp_path)
        assert hidden.returncode == 0, hidden.stderr
        assert key not in hidden.stdout + hidden.stderr
        assert "http://127.0.0.1:8080" in hidden.stdout and "131072" in hidden.stderr
        shown = run_cli("connect", client, "--host", "127.0.0.1", "--show-key", cwd=tmp_path)
        assert key in shown.stdout
    assert run_cli("connect", "key", "--show-key", cwd=tmp_path).stdout.strip() == key


def test_the_key_alone_needs_show_key(tmp_path):
    demo_stack(tmp_path)
    result = run_cli("connect", "key", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: the client key is a secret: add --show-key, e.g. KEY=$(")
    assert line.endswith(" -m stackctl connect key --show-key)")
    unknown = run_cli("connect", "cursor", cwd=tmp_path)
    assert unknown.returncode == 2 and "unknown client 'cursor'; one of: claude-code, opencode" in unknown.stderr


def test_write_merges_into_the_clients_own_file(tmp_path):
    key = demo_stack(tmp_path)
    home = tmp_path / "home"
    config = home / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"theme": "tokyonight"}))
    result = run_cli("connect", "opencode", "--write", "--host", "127.0.0.1", cwd=tmp_path, env={"HOME": str(home)})
    assert result.returncode == 0, result.stderr
    assert f"updated {config} (owner-only: it holds key 'default'); then run: opencode" in result.stdout
    assert key not in result.stdout + result.stderr
    written = json.loads(config.read_text())
    assert written["theme"] == "tokyonight" and written["provider"]["stackctl"]["options"]["apiKey"] == key
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
