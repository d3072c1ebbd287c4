"""The layering, held as tests: the imports each part of the package may make (read from the
source with `ast`, function-level imports included, and modules named in strings, as
`import_module` takes them)."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[3] / "stackctl"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "." in node.value and node.value in NAMES:
            found.add(node.value)  # a module imported by name (runtime_for's import_module)
    return {name for name in found if name == "stackctl" or name.startswith("stackctl.")}


PATHS = sorted(PACKAGE.rglob("*.py"))
NAMES = {module_name(path) for path in PATHS}
MODULES = {module_name(path): imports_of(path) for path in PATHS}


def within(name: str, *prefixes: str) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def violations(modules: dict[str, set[str]], rule) -> list[str]:
    return [f"{module} imports {target}" for module, targets in sorted(modules.items())
            for target in sorted(targets) if rule(module, target)]


def test_the_contracts_see_the_whole_package():
    assert len(MODULES) > 80 and "stackctl.proxy.app" in MODULES and "stackctl.usecases.bring_up" in MODULES


def test_the_proxy_imports_nothing_from_stackctl_outside_stackctl_proxy():
    assert violations(MODULES, lambda module, target: within(module, "stackctl.proxy")
                      and not within(target, "stackctl.proxy")) == []


def test_the_orchestration_never_imports_the_proxy_except_the_cli_mounting_its_commands():
    assert violations(MODULES, lambda module, target: not within(module, "stackctl.proxy", "stackctl.cli")
                      and within(target, "stackctl.proxy")) == []


# The proxy is grouped by API (vLLM's entrypoints/<api>/): protocol/ is its ground floor,
# backend/ and sessions/ serve every API, anthropic/, openai/ and responses/ stand side by side,
# the app wires them.
PROXY = "stackctl.proxy"
APIS = ("anthropic", "openai", "responses")
SHARED = ("backend", "sessions")
PROXY_FOLDERS = {folder: f"{PROXY}.{folder}" for folder in ("protocol", *APIS, *SHARED)}


def test_the_proxy_contracts_see_every_folder():
    for module in ("protocol.anthropic", "protocol.openai", "protocol.responses", "anthropic.routes",
                   "openai.routes", "responses.routes", "backend.client", "sessions.tracker"):
        assert f"{PROXY}.{module}" in MODULES


def test_the_proxy_protocol_imports_nothing_else_from_the_proxy():
    protocol = PROXY_FOLDERS["protocol"]
    assert violations(MODULES, lambda module, target: within(module, protocol)
                      and within(target, PROXY) and not within(target, protocol)) == []


@pytest.mark.parametrize(("api", "other"), [(api, other) for api in APIS for other in APIS if api != other])
def test_the_proxy_apis_never_import_each_other(api, other):
    assert violations(MODULES, lambda module, target: within(module, PROXY_FOLDERS[api])
                      and within(target, PROXY_FOLDERS[other])) == []


@pytest.mark.parametrize("shared", SHARED)
def test_the_proxy_shared_floors_import_no_api(shared):
    apis = tuple(PROXY_FOLDERS[api] for api in APIS)
    assert violations(MODULES, lambda module, target: within(module, PROXY_FOLDERS[shared])
                      and within(target, *apis)) == []


def test_only_the_proxy_cli_imports_the_proxy_app():
    top = (f"{PROXY}.app", f"{PROXY}.cli", f"{PROXY}.workers", f"{PROXY}.__main__")  # workers: the serving
    assert violations(MODULES, lambda module, target: within(module, PROXY) and not within(module, *top)
                      and within(target, f"{PROXY}.app", f"{PROXY}.cli")) == []


@pytest.mark.parametrize("upper", ["stackctl.cli", "stackctl.commands"])
def test_nothing_below_the_commands_imports_them(upper):
    # `python -m stackctl` (stackctl/__main__.py) is the CLI's entry point too.
    top = ("stackctl.cli", "stackctl.commands", "stackctl.__main__")
    assert violations(MODULES, lambda module, target: not within(module, *top) and within(target, upper)) == []


def test_core_modules_never_import_the_use_cases():
    top = ("stackctl.cli", "stackctl.commands", "stackctl.usecases", "stackctl.__main__")
    assert violations(MODULES, lambda module, target: not within(module, *top)
                      and within(target, "stackctl.usecases")) == []


def test_only_the_factory_names_the_runtime_classes():
    # Everything else asks the Runtime object; stackctl.runtime.runtime_for picks the class.
    concrete = ("stackctl.runtime.compose.ComposeRuntime", "stackctl.runtime.native.NativeRuntime")
    assert violations(MODULES, lambda module, target: module != "stackctl.runtime" and target in concrete) == []


# The floors of the package, top first. A module imports from its own floor and the floors below,
# never from one above: facts at the bottom (the host, model shapes and profiles), then the
# engines, the config, what is planned from it, the services, the runtimes, the stack, rendering,
# the checks and flows that use a whole stack, the use cases, and the CLI on top. The proxy stands
# apart (the contracts above), mounted by the CLI only.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("stackctl.__main__", "stackctl.cli", "stackctl.commands"),
    ("stackctl.usecases",),
    ("stackctl.doctor", "stackctl.tls", "stackctl.systemd_unit"),
    ("stackctl.render",),
    ("stackctl.stack", "stackctl.template_values"),
    ("stackctl.runtime",),
    # health probes and proxy_admin (the filter-proxy's admin API): clients of running services
    ("stackctl.services", "stackctl.health", "stackctl.project", "stackctl.proxy_admin"),
    ("stackctl.topology", "stackctl.vllm_settings", "stackctl.vllm_args", "stackctl.own_images", "stackctl.diagnosis",
     "stackctl.pull", "stackctl.gpu_exporter", "stackctl.clients"),
    ("stackctl.config", "stackctl.config_hosts"),
    ("stackctl.engine",),
    ("stackctl.host", "stackctl.models", "stackctl.profiles"),
    ("stackctl.errors", "stackctl.paths", "stackctl.resources", "stackctl.templating", "stackctl.envfile",
     "stackctl.interpolate", "stackctl.layout"),
)


def floor_of(module: str) -> int | None:
    """0 for the ground floor; None for the proxy (and the package itself: its version)."""
    for height, parts in enumerate(reversed(FLOORS)):
        if within(module, *parts):
            return height
    return None


def known(modules: set[str]) -> set[str]:
    """Imported names that are modules (`from stackctl.x import y` names stackctl.x, and
    stackctl.x.y only when y is a module)."""
    return {name for name in modules if name in MODULES}


def test_every_module_outside_the_proxy_is_on_a_floor():
    assert [module for module in MODULES if floor_of(module) is None
            and not within(module, "stackctl.proxy") and module != "stackctl"] == []


def test_no_module_imports_from_a_floor_above_its_own():
    def upward(module: str, target: str) -> bool:
        here, there = floor_of(module), floor_of(target)
        return here is not None and there is not None and there > here

    assert violations(MODULES, upward) == []


def test_no_import_cycle():
    graph = {module: known(targets) - {module} for module, targets in MODULES.items()}
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as error:
        raise AssertionError(f"import cycle: {' -> '.join(error.args[1])}") from None


def test_doctor_only_checks_nothing_below_the_use_cases_asks_it():
    # Host facts live in stackctl.host, model facts in stackctl.models: doctor is no library.
    users = ("stackctl.usecases", "stackctl.commands", "stackctl.cli", "stackctl.doctor")
    assert violations(MODULES, lambda module, target: not within(module, *users)
                      and within(target, "stackctl.doctor")) == []
