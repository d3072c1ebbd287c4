"""Fault paths of `stackctl up --runtime compose` against a real engine: one clear error, the log
tail and a hint where there is a log, and no container left behind."""

from __future__ import annotations

import json
import socket
import subprocess

import pytest
import yaml

from tests.support.cli import error_line
from tests.support.local_images import image_exists
from tests.support.stacks import (
    DemoStack,
    make_compose_stack,
    project_containers,
    remove_compose_project,
)

pytestmark = [pytest.mark.e2e, pytest.mark.docker]


@pytest.fixture
def compose_stack(tmp_path, local_images):
    made: list[DemoStack] = []

    def make(**overrides) -> DemoStack:
        stack = make_compose_stack(tmp_path / f"stack{len(made)}", local_images, **overrides)
        made.append(stack)
        return stack

    yield make
    for stack in made:
        remove_compose_project(stack)


def test_bad_vllm_flag_shows_the_log_tail_and_a_hint_and_leaves_nothing(compose_stack):
    stack = compose_stack(vllm={"extra_args": ["--no-such-flag"]})
    result = stack.cli("up", timeout=1200)
    assert result.returncode == 1
    line = error_line(result)
    assert "vllm exited during start" in line and "stackctl logs vllm" in line
    assert "unrecognized arguments: --no-such-flag" in result.stderr  # the log tail
    assert "fix:" in result.stderr and "vllm.extra_args" in result.stderr, result.stderr
    assert project_containers(stack) == []


def test_a_later_service_failing_removes_everything_this_up_started(compose_stack, local_images):
    # nginx from the Prometheus stand-in: its entrypoint refuses nginx's command and exits.
    stack = compose_stack(images={"nginx": local_images.stand_ins["prometheus"]})
    result = stack.cli("up", timeout=1200)
    assert result.returncode == 1, result.stdout[-2000:]
    assert "nginx exited during start" in error_line(result)
    for name in ("vllm", "filter-proxy", "prometheus"):
        assert f"✓ {name} healthy" in result.stdout
    assert project_containers(stack) == [], "a failed `up` left containers behind"


def test_a_taken_port_is_caught_before_anything_starts(compose_stack):
    stack = compose_stack()
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", stack.ports["http"]))
        squatter.listen()
        result = stack.cli("up", timeout=600)
    assert result.returncode == 1
    assert "nothing was started" in error_line(result)
    assert f"http {stack.ports['http']}" in result.stderr and "fix:" in result.stderr
    assert project_containers(stack) == []


def test_an_image_that_cannot_be_had_is_one_clear_line(compose_stack):
    stack = compose_stack(images={"prometheus": "registry.invalid/prom/prometheus:v0"})
    result = stack.cli("up", timeout=600)
    assert result.returncode == 1
    line = error_line(result)
    assert "registry.invalid/prom/prometheus:v0 (service prometheus) cannot be pulled" in line
    assert "images.prometheus" in line
    assert project_containers(stack) == []


def test_a_gpu_stack_on_an_engine_without_nvidia_runtime_is_refused_before_start(compose_stack):
    stack = compose_stack(hardware="generic", model="qwen3-32b")
    result = stack.cli("up", timeout=600)
    assert result.returncode == 1
    assert "nothing was started" in error_line(result)
    assert "nvidia-runtime" in result.stderr and "gpu-exporter, vllm ask Docker for GPUs" in result.stderr
    assert "nvidia-ctk runtime configure" in result.stderr
    assert project_containers(stack) == []


def test_docker_refusing_a_gpu_container_is_diagnosed_with_the_runtime_fix(compose_stack):
    # The real engine here has no NVIDIA runtime: with the checks skipped, Docker itself refuses
    # the first container that asks for a GPU, and that refusal (no log exists) is what is read.
    cpu = compose_stack()
    assert cpu.cli("render").returncode == 0
    image = yaml.safe_load((cpu.root / "docker-compose.yml").read_text())["services"]["vllm"]["image"]
    if not image_exists(image):
        subprocess.run(["docker", "compose", "build", "vllm"], cwd=cpu.root, check=True, capture_output=True,
                       timeout=3600)
    # Monitoring off: a GPU host would also run gpu-exporter, whose image this offline engine lacks.
    stack = compose_stack(hardware="generic", model="tiny", images={"vllm": image}, services={"monitoring": False})
    result = stack.cli("up", "--skip-checks", timeout=900)
    assert result.returncode == 1, result.stdout[-2000:]
    # Compose's `gpus: all` asks with no capability named: `capabilities: []` (older: `[[gpu]]`).
    assert 'could not select device driver "" with capabilities: [' in error_line(result)
    assert "cause: Docker has no NVIDIA runtime" in result.stderr
    assert "fix: install the NVIDIA Container Toolkit" in result.stderr and "nvidia-ctk runtime configure" in result.stderr
    assert project_containers(stack) == []
    doctor = json.loads(stack.cli("doctor", "--json").stdout)
    last = next(check for check in doctor["checks"] if check["name"] == "last-start")
    assert last["status"] == "fail" and "Docker has no NVIDIA runtime" in last["found"], last
    assert "nvidia-ctk runtime configure" in last["fix"]
