"""`up`: the fast doctor checks, the runtime's own preparation, then every service in order
behind its gate. A failed start is recorded for `doctor` (and forgotten by the next success)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from stackctl.diagnosis.start_record import clear_failed_start, record_failed_start
from stackctl.doctor import CheckResult, Status, run_checks
from stackctl.errors import StackError
from stackctl.pull import PullProgress, PullResult, stage_weights
from stackctl.runtime import ServiceEvent, ServiceStartFailed
from stackctl.stack import Stack
from stackctl.usecases.endpoint import Endpoint, endpoint_of


@dataclass(frozen=True)
class PreflightFinding:
    """A fast check that did not pass (a failure stops `up` unless checks are skipped)."""

    result: CheckResult


@dataclass(frozen=True)
class Preparing:
    """The runtime prepares what the services need (an engine venv, a model)."""

    message: str


@dataclass(frozen=True)
class StartingDespiteChecks:
    failed: int


@dataclass(frozen=True)
class StagingWeights:
    """The model's weights are downloading into the cache vLLM mounts (its own stage, so vLLM's
    health gate times only the loading)."""

    progress: PullProgress


@dataclass(frozen=True)
class WeightsStaged:
    result: PullResult


UpEvent = PreflightFinding | Preparing | StartingDespiteChecks | StagingWeights | WeightsStaged | ServiceEvent


class PreflightFailed(StackError):
    """`doctor --fast` found a failure, so nothing was started."""


def bring_up(stack: Stack, *, skip_checks: bool = False,
             on_event: Callable[[UpEvent], None] = lambda _event: None) -> Endpoint:
    """Start every enabled service; returns where clients reach the stack."""
    _preflight(stack, skip_checks, on_event)
    services = stack.services()
    stack.runtime.prepare(services, lambda message: on_event(Preparing(message)))
    if any(service.name == "vllm" for service in services):
        # A runtime that cannot start anything says so before a download of tens of GB.
        stack.runtime.check_available()
        staged = stage_weights(stack.config, stack.layout, lambda progress: on_event(StagingWeights(progress)))
        if staged is not None:
            on_event(WeightsStaged(staged))
    try:
        stack.runtime.up(services, on_event)
    except ServiceStartFailed as failure:
        if failure.service:
            record_failed_start(stack.layout, service=failure.service, message=str(failure),
                                log_tail=failure.log_tail or [], runtime=stack.runtime.name)
        raise
    clear_failed_start(stack.layout)
    return endpoint_of(stack)


def _preflight(stack: Stack, skip_checks: bool, on_event: Callable[[UpEvent], None]) -> None:
    """`doctor --fast` before anything starts: a known trap stops `up` with its fix."""
    results = run_checks(stack, fast_only=True)
    for result in results:
        if result.status is not Status.ok:
            on_event(PreflightFinding(result))
    failed = sum(result.status is Status.fail for result in results)
    if not failed:
        return
    if skip_checks:
        on_event(StartingDespiteChecks(failed))
        return
    raise PreflightFailed(f"`doctor --fast` found {failed} failing check(s), so nothing was started; "
                          "fix them, or pass --skip-checks to start anyway")
