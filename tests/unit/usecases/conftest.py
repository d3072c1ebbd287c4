from __future__ import annotations

import pytest

from stackctl.stack import Stack
from tests.support.stack_builder import make_demo_stack


@pytest.fixture
def demo(tmp_path) -> Stack:
    """The demo stack `stackctl init --demo` writes, loaded."""
    return make_demo_stack(tmp_path)
