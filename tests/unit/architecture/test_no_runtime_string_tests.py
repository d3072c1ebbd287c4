"""No `runtime == "compose"` anywhere: a runtime is an object that answers for itself."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "stackctl"
KIND_TEST = re.compile(r"""runtime(?:\.name)?\s*[!=]=\s*["'](?:compose|native)["']|["'](?:compose|native)["']\s*[!=]=""")


def test_no_code_tests_the_runtime_by_its_name():
    found = [f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}"
             for path in sorted(PACKAGE.rglob("*.py"))
             for number, line in enumerate(path.read_text().splitlines(), 1) if KIND_TEST.search(line)]
    assert found == []
