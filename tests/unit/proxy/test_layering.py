"""The filter-proxy ships alone (images/filter-proxy): it never imports the rest of stackctl."""

import ast
from pathlib import Path

import stackctl.proxy

PROXY = Path(stackctl.proxy.__file__).parent


def test_the_proxy_imports_nothing_from_stackctl_outside_itself() -> None:
    offenders = []
    for path in sorted(PROXY.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            for name in names:
                if name.split(".")[0] == "stackctl" and not name.startswith("stackctl.proxy"):
                    offenders.append(f"{path.relative_to(PROXY)}:{node.lineno} imports {name}")
    assert not offenders, offenders
