"""`stackctl doctor` and `stackctl systemd install` through Typer's CliRunner, on an app built
the way cli.py builds its own (root callback holding the stack directory)."""

import json
import stat
import sys
from pathlib import Path
from typing import Annotated

import pytest
import typer
from typer.testing import CliRunner

from stackctl.commands import doctor as doctor_command
from stackctl.commands import systemd as systemd_command
from stackctl.doctor import CHECKS, run_checks
from stackctl.doctor.result import Status
from stackctl.doctor.runner import Check
from stackctl.envfile import secret_values
from stackctl.layout import find_layout
from stackctl.systemd_unit import render_unit
from tests.support.fakehost import executable, make_host
from tests.support.processes import free_ports
from tests.support.stack_builder import make_stack


def build_app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _options(ctx: typer.Context, directory: Annotated[Path | None, typer.Option("--dir", "-C")] = None) -> None:
        ctx.obj = find_layout(directory)

    doctor_command.register(app)
    systemd_command.register(app)
    return app


def port_settings() -> dict:
    names = ["vllm", "proxy", "prometheus", "grafana", "node_exporter", "gpu_exporter", "http", "https"]
    return dict(zip(names, free_ports(len(names)), strict=True))


def demo_stack(tmp_path):
    """The CPU demo stack on free ports: every fast check passes on any Linux host."""
    return make_stack(tmp_path, runtime="native", hardware="cpu", model="tiny", ports=port_settings(),
                      hf_cache=str(tmp_path / "hf"))


def test_doctor_json_shape_and_exit_zero_when_nothing_fails(tmp_path):
    stack = demo_stack(tmp_path)
    result = CliRunner().invoke(build_app(), ["--dir", str(stack.layout.root), "doctor", "--json", "--fast"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert set(document) == {"ok", "summary", "checks"}
    assert document["ok"] is True
    assert set(document["summary"]) == {"ok", "warn", "fail"} and document["summary"]["fail"] == 0
    names = [check["name"] for check in document["checks"]]
    assert {"gpu", "driver", "docker", "disk", "memory", "model-fit", "tool-parser", "ports", "nginx-upstream",
            "hf-token", "env-file"} <= set(names)
    assert "vllm-flags" not in names  # --fast leaves out the slow engine parse
    for check in document["checks"]:
        assert set(check) == {"name", "status", "found", "fix"}
        assert check["status"] in {"ok", "warn", "fail"}
    assert sum(document["summary"].values()) == len(document["checks"])


def test_doctor_exits_non_zero_when_a_check_fails(tmp_path):
    stack = demo_stack(tmp_path)
    stack.layout.env_file.chmod(0o644)
    app = build_app()
    result = CliRunner().invoke(app, ["--dir", str(stack.layout.root), "doctor", "--json", "--fast"])
    assert result.exit_code == 1
    document = json.loads(result.output)
    assert document["ok"] is False and document["summary"]["fail"] >= 1
    env = next(check for check in document["checks"] if check["name"] == "env-file")
    assert env["status"] == "fail" and env["fix"].startswith("chmod 600")
    table = CliRunner().invoke(app, ["--dir", str(stack.layout.root), "doctor", "--fast"])
    assert table.exit_code == 1
    assert "env-file" in table.output and "chmod 600" in table.output and "1 failed" in table.output


def test_doctor_without_stack_yaml_is_a_one_line_error(tmp_path):
    import subprocess

    result = subprocess.run([sys.executable, "-m", "stackctl", "--dir", str(tmp_path), "doctor"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'stack.yaml'} not found; run `stackctl init` to create it"]


def test_a_crashing_check_becomes_a_failed_row(tmp_path, monkeypatch):
    def broken(_ctx):
        raise RuntimeError("probe exploded")

    monkeypatch.setattr("stackctl.doctor.runner.CHECKS", (*CHECKS[:1], Check("broken", broken)))
    results = run_checks(demo_stack(tmp_path), facts=make_host(tmp_path))
    broken_row = results[-1]
    assert broken_row.status is Status.fail and "RuntimeError: probe exploded" in broken_row.found


def test_fast_only_skips_the_engine_parse(tmp_path):
    names = {result.name for result in run_checks(demo_stack(tmp_path), fast_only=True, facts=make_host(tmp_path))}
    assert "vllm-flags" not in names
    slow = run_checks(demo_stack(tmp_path), fast_only=False, facts=make_host(tmp_path), engine_python=tmp_path / "none")
    assert "vllm-flags" in {result.name for result in slow}


@pytest.mark.parametrize("runtime", ["compose", "native"])
def test_systemd_unit_restarts_and_references_env_without_secrets(tmp_path, runtime):
    stack = make_stack(tmp_path, runtime=runtime, hardware="rtx-pro-6000")
    text = render_unit(stack.layout, stack.runtime)
    assert "Restart=always" in text
    assert f"EnvironmentFile={stack.layout.env_file}" in text
    assert "WantedBy=multi-user.target" in text
    for secret in secret_values(stack.layout.env_file):
        assert secret not in text
    if runtime == "compose":
        assert "Requires=docker.service" in text
        assert f"compose --project-directory {stack.layout.root}" in text and " up --remove-orphans" in text
    else:
        assert f"--dir {stack.layout.root} up --runtime native" in text


def test_systemd_install_writes_and_enables_the_unit(tmp_path, monkeypatch):
    stack = make_stack(tmp_path, runtime="compose", hardware="rtx-pro-6000")
    calls = tmp_path / "systemctl-calls"
    bin_dir = tmp_path / "bin"
    executable(bin_dir, "systemctl", f"#!{sys.executable}\nimport sys\nopen({str(calls)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n")
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    units = tmp_path / "units"
    result = CliRunner().invoke(build_app(), ["--dir", str(stack.layout.root), "systemd", "install", "--unit-dir", str(units)])
    assert result.exit_code == 0, result.output
    unit = units / "stackctl-stack.service"
    assert unit.exists() and stat.S_IMODE(unit.stat().st_mode) == 0o644
    assert "Restart=always" in unit.read_text()
    assert calls.read_text().splitlines() == ["daemon-reload", "enable stackctl-stack.service"]
    for secret in secret_values(stack.layout.env_file):
        assert secret not in unit.read_text() and secret not in result.output


def test_systemd_install_without_env_file_refuses(tmp_path):
    stack = make_stack(tmp_path)
    stack.layout.env_file.unlink()
    result = CliRunner().invoke(build_app(), ["--dir", str(stack.layout.root), "systemd", "install", "--unit-dir",
                                              str(tmp_path / "units"), "--no-enable"])
    assert result.exit_code != 0 and "stackctl init" in str(result.exception)
    assert not (tmp_path / "units").exists() or not any((tmp_path / "units").iterdir())


_MAIN_WITH_COMMANDS = (
    "import sys; from stackctl import cli; from stackctl.commands import doctor, systemd; "
    "doctor.register(cli.app); systemd.register(cli.app); sys.argv[0] = 'stackctl'; cli.main()"
)


def run_main(*args: str, cwd: Path):
    """cli.main() with the commands registered, as the lead's one-line registration will do."""
    import subprocess

    return subprocess.run([sys.executable, "-c", _MAIN_WITH_COMMANDS, *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, check=False)


def test_doctor_through_cli_main_exit_codes(tmp_path):
    stack = demo_stack(tmp_path)
    root = str(stack.layout.root)
    assert run_main("--dir", root, "doctor", "--fast", "--json", cwd=tmp_path).returncode == 0
    stack.layout.env_file.chmod(0o640)
    failing = run_main("--dir", root, "doctor", "--fast", "--json", cwd=tmp_path)
    assert failing.returncode == 1 and json.loads(failing.stdout)["ok"] is False
    missing = run_main("--dir", str(tmp_path / "nowhere"), "doctor", cwd=tmp_path)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert "run `stackctl init`" in missing.stderr
