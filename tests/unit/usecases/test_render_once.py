"""Render once: `up` builds the template context once and hands the runtime what it rendered;
`down` and `status` render nothing and plan no engine install (a native GPU stack with no engine
installed stops and reports without the compatibility table being asked)."""

from __future__ import annotations

from collections.abc import Collection

import pytest
import yaml

import stackctl.engine.gpu_install
import stackctl.stack
from stackctl.config import StackConfig
from stackctl.layout import StackLayout
from stackctl.project import RenderedProject
from stackctl.runtime.base import OnEvent
from stackctl.runtime.compose import ComposeRuntime
from stackctl.runtime.native import NativeRuntime
from stackctl.stack import Stack
from stackctl.usecases.bring_up import bring_up
from stackctl.usecases.init_stack import DEMO_CHOICES, init_stack
from stackctl.usecases.report_status import report_status
from stackctl.usecases.tear_down import tear_down


class Received:
    """What a runtime was handed by the use case (the projects `up` got), in place of starting."""

    def __init__(self) -> None:
        self.projects: list[RenderedProject] = []
        self.compose_files: list[str] = []


def recording(runtime_class: type) -> type:
    class RecordingRuntime(runtime_class):  # type: ignore[misc,valid-type]
        received = Received()

        def prepare(self, services: Collection[str], on_progress) -> None:
            return  # the engine and demo model are not installed here

        def check_available(self) -> None:
            return

        def make_images_ready(self, project: RenderedProject, on_event: OnEvent = lambda _event: None) -> list[str]:
            return []  # every image is here already

        def up(self, project: RenderedProject, on_event: OnEvent = lambda _event: None) -> None:
            self.received.projects.append(project)
            self.received.compose_files.append(self.layout.compose_file.read_text())

    return RecordingRuntime


@pytest.fixture
def counted_contexts(monkeypatch) -> list[StackConfig]:
    built: list[StackConfig] = []
    real = stackctl.stack.template_context

    def counting(config, runtime, host):
        built.append(config)
        return real(config, runtime, host)

    monkeypatch.setattr(stackctl.stack, "template_context", counting)
    return built


@pytest.mark.parametrize("runtime_class", [NativeRuntime, ComposeRuntime])
def test_up_builds_the_template_context_once_and_runs_what_it_rendered(tmp_path, counted_contexts, runtime_class):
    layout = StackLayout(tmp_path)
    init_stack(layout, dict(DEMO_CHOICES))
    loaded = Stack.load(layout, runtime=runtime_class.name)
    runtime = recording(runtime_class)(loaded.layout, loaded.config)
    stack = Stack(loaded.layout, loaded.config, runtime)

    bring_up(stack, skip_checks=True)

    # Before: bring_up, the runtime's render and render_configs each built it, and under Compose
    # doctor's preflight too (3 natively, 4 under Compose).
    assert len(counted_contexts) == 1
    [project] = runtime.received.projects
    assert project.services is stack.services
    [compose_file] = runtime.received.compose_files
    assert compose_file == project.compose_text
    assert [service.name for service in project.services] == list(yaml.safe_load(compose_file)["services"])


@pytest.fixture
def gpu_native_stack(tmp_path, monkeypatch) -> Stack:
    """A GPU stack on the native runtime, on a machine where no CUDA engine is installed."""
    monkeypatch.setenv("STACKCTL_HOME", str(tmp_path / "home"))
    layout = StackLayout(tmp_path / "stack")
    init_stack(layout, {"hardware": "rtx-pro-6000", "model": "qwen3-32b", "runtime": "native"})
    return Stack.load(layout)


@pytest.fixture
def no_engine_plans(monkeypatch) -> list[str]:
    planned: list[str] = []

    def refuse(architecture, *args, **kwargs):
        planned.append(str(architecture))
        raise AssertionError("an engine install was planned")

    monkeypatch.setattr(stackctl.engine.gpu_install, "plan_gpu_engine", refuse)
    monkeypatch.setattr("stackctl.runtime.native_engine.plan_gpu_engine", refuse)
    return planned


def test_down_and_status_render_nothing_and_plan_no_engine_install(gpu_native_stack, counted_contexts,
                                                                    no_engine_plans):
    assert tear_down(gpu_native_stack) == []
    report = report_status(gpu_native_stack)
    assert [row.state for row in report.services] == ["stopped"] * len(gpu_native_stack.plan.services)
    assert report.engine is not None and report.engine.what == "vLLM not installed yet"
    assert counted_contexts == [] and no_engine_plans == []


def test_a_compose_stack_never_asks_for_a_native_engine(tmp_path, no_engine_plans, monkeypatch):
    monkeypatch.setenv("STACKCTL_HOME", str(tmp_path / "home"))
    layout = StackLayout(tmp_path)
    init_stack(layout, {"hardware": "rtx-pro-6000", "model": "qwen3-32b"})
    vllm = next(service for service in Stack.load(layout).services if service.name == "vllm")
    assert vllm.image.startswith("nvcr.io/nvidia/vllm:") and no_engine_plans == []
