"""`init_stack`: choices validated before any write, defaults written, secrets never replaced."""

from __future__ import annotations

import pytest
import yaml

from stackctl.config import StackConfig
from stackctl.envfile import read_env
from stackctl.errors import ConfigError
from stackctl.layout import StackLayout
from stackctl.usecases.init_stack import DEMO_CHOICES, init_stack


def test_defaults_come_from_stack_config_and_are_written(tmp_path):
    layout = StackLayout(tmp_path / "stack")
    result = init_stack(layout, {})
    written = yaml.safe_load(layout.stack_file.read_text())
    defaults = StackConfig()
    assert written == {"hardware": defaults.hardware, "model": defaults.model}
    assert result.stack_file_written and set(result.secrets.created) >= {"VLLM_API_KEY", "STACKCTL_PROXY_KEYS"}
    assert (layout.env_file.stat().st_mode & 0o777) == 0o600 and result.gitignore_changed


def test_running_again_keeps_the_file_and_every_secret(tmp_path):
    layout = StackLayout(tmp_path)
    init_stack(layout, dict(DEMO_CHOICES))
    before, secrets = layout.stack_file.read_text(), read_env(layout.env_file)
    result = init_stack(layout, {"model": "qwen3-32b"})
    assert not result.stack_file_written and layout.stack_file.read_text() == before
    assert read_env(layout.env_file) == secrets and not result.secrets.created
    forced = init_stack(layout, {"hardware": "rtx-pro-6000", "model": "qwen3-32b"}, force=True)
    assert forced.stack_file_written and yaml.safe_load(layout.stack_file.read_text())["model"] == "qwen3-32b"
    assert read_env(layout.env_file) == secrets


def test_bad_choices_write_nothing(tmp_path):
    layout = StackLayout(tmp_path / "stack")
    with pytest.raises(ConfigError, match="unknown profile 'gpt-5'"):
        init_stack(layout, {"model": "gpt-5"})
    assert not layout.root.exists()
