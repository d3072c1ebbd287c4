"""Each runtime answers for itself: paths, model location, ACME and certificates, nginx reloads,
systemd lines and the vLLM key. Rendering asks these answers; nothing tests a runtime's name."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import get_args

import pytest

from stackctl.config import RuntimeName, parse_stack_config
from stackctl.engine.demo_model import default_demo_model_dir
from stackctl.envfile import read_env
from stackctl.layout import StackLayout
from stackctl.runtime import RUNTIME_NAMES, Runtime, runtime_for
from stackctl.stack import Stack
from tests.support.stack_builder import make_stack


def runtime(tmp_path: Path, name: str, **settings) -> Runtime:
    layout, config = StackLayout(tmp_path), parse_stack_config({"runtime": name, **settings})
    return runtime_for(config.runtime, layout, config)


def test_the_factory_knows_every_runtime_stack_yaml_allows():
    assert set(RUNTIME_NAMES) == set(get_args(RuntimeName)) == {"compose", "native"}
    for name in RUNTIME_NAMES:
        assert isinstance(runtime_for(name, StackLayout(Path("/x")), parse_stack_config({})), Runtime)


def test_compose_paths_are_relative_to_the_project_and_native_ones_absolute(tmp_path):
    assert runtime(tmp_path, "compose").template_paths() == {
        "rendered": "./rendered", "data": "./data", "state": "./.stackctl"}
    assert runtime(tmp_path, "native").template_paths() == {
        "rendered": str(tmp_path / "rendered"), "data": str(tmp_path / "data"), "state": str(tmp_path / ".stackctl")}


def test_where_vllm_finds_a_local_model(tmp_path):
    cpu = {"hardware": "cpu", "model": "tiny"}
    demo = default_demo_model_dir()
    # The vllm-cpu image carries the demo model; natively it is the generated directory.
    assert runtime(tmp_path, "compose", **cpu).model_location(demo).reference == "/models/tiny"
    assert runtime(tmp_path, "compose", **cpu).model_location(demo).mounts == ()
    assert runtime(tmp_path, "native", **cpu).model_location(demo).reference == str(demo)
    # Any other local directory is mounted read-only into the container.
    gpu = runtime(tmp_path, "compose", hardware="rtx-pro-6000").model_location(tmp_path / "weights")
    assert gpu.reference == "/models/local" and gpu.mounts == (f"{tmp_path / 'weights'}:/models/local:ro",)
    assert runtime(tmp_path, "compose").model_location(None).reference is None  # the Hugging Face id


def test_acme_certificates_and_nginx_main_config(tmp_path):
    compose, native = runtime(tmp_path, "compose"), runtime(tmp_path, "native")
    assert compose.acme_webroot() == "/var/www/acme" and native.acme_webroot() == str(tmp_path / "data/acme")
    assert compose.certificate_root() == "/etc/letsencrypt" and native.certificate_root() is None
    assert not compose.renders_nginx_main_config and native.renders_nginx_main_config


def test_renewals_reach_nginx_each_runtimes_way(tmp_path):
    assert runtime(tmp_path, "compose").certificate_deploy_hook() is None
    hook = shlex.split(runtime(tmp_path, "native").certificate_deploy_hook())
    assert hook[-2:] == ["-s", "reload"] and hook[hook.index("-c") + 1] == str(tmp_path / "rendered/nginx/nginx.conf")
    assert "12 h" in runtime(tmp_path, "compose").renewal_note()


def test_systemd_lines(tmp_path):
    stackctl = ["/usr/bin/python3", "-m", "stackctl", "--dir", str(tmp_path)]
    compose = "\n".join(runtime(tmp_path, "compose").systemd_service_lines(stackctl, "/usr/bin/docker"))
    assert "Requires=docker.service" in compose and "ExecStartPre=/usr/bin/python3 -m stackctl" in compose
    assert f"/usr/bin/docker compose --project-directory {tmp_path}" in compose and "up --remove-orphans" in compose
    native = "\n".join(runtime(tmp_path, "native").systemd_service_lines(stackctl, "/usr/bin/docker"))
    assert "Type=forking" in native and "up --runtime native" in native and "docker" not in native


@pytest.mark.parametrize("name", ["compose", "native"])
def test_the_vllm_key_comes_from_the_environment_first_then_env_file(tmp_path, monkeypatch, name):
    stack: Stack = make_stack(tmp_path, runtime=name)
    from_file = read_env(stack.layout.env_file)["VLLM_API_KEY"]
    monkeypatch.delenv("VLLM_API_KEY", raising=False)
    assert stack.runtime.vllm_api_key() == from_file
    monkeypatch.setenv("VLLM_API_KEY", "sk-from-the-shell")
    assert stack.runtime.vllm_api_key() == "sk-from-the-shell"


def test_doctor_facing_answers(tmp_path):
    compose, native = runtime(tmp_path, "compose"), runtime(tmp_path, "native")
    assert compose.needs_docker and not native.needs_docker
    assert native.privileged_ports_need_root and not compose.privileged_ports_need_root
    assert native.inherits_shell_environment and not compose.inherits_shell_environment
