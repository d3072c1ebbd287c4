"""The values fragments are filled with: paths and the model location from the runtime, the
vLLM command line from the settings, never a secret."""

from __future__ import annotations

from stackctl.config import parse_stack_config
from stackctl.engine.demo_model import default_demo_model_dir
from stackctl.envfile import ensure_secrets, secret_values
from stackctl.layout import StackLayout
from stackctl.stack import Stack
from stackctl.template_values import proxy_args


def context_for(tmp_path, runtime: str, **settings):
    return Stack.from_config(parse_stack_config({"runtime": runtime, **settings}), StackLayout(tmp_path)).template_context


def test_paths_and_model_follow_the_runtime(tmp_path):
    compose = context_for(tmp_path, "compose", hardware="cpu", model="tiny")
    native = context_for(tmp_path, "native", hardware="cpu", model="tiny")
    assert compose["paths"]["rendered"] == "./rendered" and native["paths"]["rendered"] == str(tmp_path / "rendered")
    model = compose["vllm_args"][compose["vllm_args"].index("--model") + 1]
    assert model == "/models/tiny" and compose["vllm_extra_volumes"] == []
    assert native["vllm_args"][native["vllm_args"].index("--model") + 1] == str(default_demo_model_dir())
    assert "VLLM_CPU_KVCACHE_SPACE=1" in compose["vllm_environment"]


def test_no_secret_in_any_template_value(tmp_path):
    layout = StackLayout(tmp_path)
    ensure_secrets(layout.env_file)
    text = repr(context_for(tmp_path, "compose")) + repr(context_for(tmp_path, "native"))
    assert all(secret not in text for secret in secret_values(layout.env_file))
    assert not any("key" in arg.lower() for arg in proxy_args(parse_stack_config({})))
