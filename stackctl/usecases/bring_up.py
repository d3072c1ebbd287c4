"""`up`: the fast doctor checks, the runtime's own preparation, then every service in order
behind its gate. A failed start is recorded for `doctor` (and forgotten by the next success)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from stackctl.diagnosis.start_record import clear_failed_start, record_failed_start
from stackctl.doctor import CheckResult, Status, run_checks
from stackctl.errors import StackError
from stackctl.pull import PullProgress, PullResult, stage_weights
from stackctl.render import render_project
from stackctl.runtime import ServiceEvent, ServiceStartFailed
from stackctl.stack import Stack
from stackctl.topology.peers import PeerState, wait_for_peers
from stackctl.usecases.endpoint import Endpoint, endpoint_of

# How long a host waits for the hosts it depends on: a GPU host's vLLM may load for half an hour.
DEFAULT_PEER_WAIT_S = 1800.0 + 60.0


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


@dataclass(frozen=True)
class WaitingForPeers:
    """Another host this one depends on (stack.yaml's hosts:) is not serving yet."""

    elapsed_s: float
    timeout_s: float
    states: tuple[PeerState, ...]


@dataclass(frozen=True)
class PeersReady:
    """The last look at each peer before starting: `ready` false ones are started without."""

    states: tuple[PeerState, ...]


UpEvent = (PreflightFinding | Preparing | StartingDespiteChecks | WaitingForPeers | PeersReady | StagingWeights
           | WeightsStaged | ServiceEvent)


class PeersNotServing(StackError):
    """None of the hosts this one depends on answered in time."""


class PreflightFailed(StackError):
    """`doctor --fast` found a failure, so nothing was started."""


def bring_up(stack: Stack, *, skip_checks: bool = False,
             on_event: Callable[[UpEvent], None] = lambda _event: None) -> Endpoint:
    """Start every enabled service; returns where clients reach the stack."""
    _preflight(stack, skip_checks, on_event)
    _wait_for_peers(stack, on_event)
    # Before rendering: what the runtime installs here (a native engine) is what the services run.
    stack.runtime.prepare(stack.plan.services, lambda message: on_event(Preparing(message)))
    if "vllm" in stack.plan.services:
        # A runtime that cannot start anything says so before a download of tens of GB.
        stack.runtime.check_available()
        staged = stage_weights(stack.config, stack.layout, lambda progress: on_event(StagingWeights(progress)))
        if staged is not None:
            on_event(WeightsStaged(staged))
    project = render_project(stack)
    project.write(stack.layout)
    arrived = stack.runtime.make_images_ready(project, on_event)
    vllm = next((service for service in project.services if service.name == "vllm"), None)
    if vllm is not None and vllm.image in arrived:
        # How vLLM starts depends on its image's ENTRYPOINT, which Docker tells only once the
        # image is here: the one case rendered again (a fresh Stack, so nothing stale is reused).
        stack = Stack(stack.layout, stack.config, stack.runtime)
        project = render_project(stack)
        project.write(stack.layout)
    try:
        stack.runtime.up(project, on_event)
    except ServiceStartFailed as failure:
        if failure.service:
            record_failed_start(stack.layout, service=failure.service, message=str(failure),
                                log_tail=failure.log_tail or failure.start_output or [], runtime=stack.runtime.name)
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


def _wait_for_peers(stack: Stack, on_event: Callable[[UpEvent], None]) -> None:
    """The edge waits for the GPU hosts' filter-proxies, a ray-worker for its head's Ray port.
    Replicas: once one serves, the others get a grace period, then nginx routes around them."""
    gates = stack.plan.peers
    if not gates:
        return
    config = stack.config
    timeout = DEFAULT_PEER_WAIT_S
    if "vllm" in config.start_timeouts:
        timeout = config.start_timeouts["vllm"] + config.start_timeouts.get("filter-proxy", 60.0)
    states = wait_for_peers(gates, timeout, lambda elapsed, found: on_event(
        WaitingForPeers(elapsed, timeout, tuple(found))) if not all(state.ready for state in found) else None)
    on_event(PeersReady(tuple(states)))
    if not any(state.ready for state in states):
        missing = "; ".join(f"{state.gate.host} ({state.gate.service}): {state.detail}" for state in states)
        raise PeersNotServing(
            f"waited {timeout:.0f} s for the hosts this one depends on, and none serves: {missing}; start them "
            f"first (`stackctl up --host NAME` on each), and check `stackctl doctor --host {stack.layout.host}` here"
        )
