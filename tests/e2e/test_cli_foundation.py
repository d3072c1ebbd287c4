"""The real CLI in a subprocess: init, secrets, render, and clear one-line errors."""

import re
import stat
import subprocess
import sys

import yaml

from stackctl.envfile import read_env
from tests.support.cli import assert_one_line_error, run_cli


def test_init_writes_secrets_0600_and_gitignore(tmp_path):
    result = run_cli("init", "--hardware", "rtx-pro-6000", "--model", "qwen3-32b", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    env_file = tmp_path / ".env"
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    values = read_env(env_file)
    assert re.fullmatch(r"sk-[0-9a-f]{64}", values["VLLM_API_KEY"])
    assert len(values["GRAFANA_ADMIN_PASSWORD"]) >= 24
    assert values["HF_TOKEN"] == ""  # left for the user
    assert re.fullmatch(r"default=sk-[0-9a-f]{64}", values["STACKCTL_PROXY_KEYS"])
    assert ".env" in (tmp_path / ".gitignore").read_text().splitlines()
    assert yaml.safe_load((tmp_path / "stack.yaml").read_text()) == {"hardware": "rtx-pro-6000", "model": "qwen3-32b"}
    for secret in values.values():
        if secret:
            assert secret not in result.stdout + result.stderr


def test_init_again_never_overwrites_secrets_and_keeps_user_lines(tmp_path):
    assert run_cli("init", cwd=tmp_path).returncode == 0
    env_file = tmp_path / ".env"
    with env_file.open("a") as handle:
        handle.write("# mine\nHF_TOKEN_EXTRA=x\n")
    env_file.chmod(0o644)
    before = read_env(env_file)
    (tmp_path / ".gitignore").write_text("node_modules\n.env\n")
    result = run_cli("init", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert read_env(env_file) == before
    assert "# mine" in env_file.read_text()
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    assert (tmp_path / ".gitignore").read_text() == "node_modules\n.env\n"


def test_secrets_rotate_replaces_exactly_one(tmp_path):
    assert run_cli("init", cwd=tmp_path).returncode == 0
    before = read_env(tmp_path / ".env")
    result = run_cli("secrets", "rotate", "VLLM_API_KEY", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    after = read_env(tmp_path / ".env")
    assert after["VLLM_API_KEY"] != before["VLLM_API_KEY"]
    assert re.fullmatch(r"sk-[0-9a-f]{64}", after["VLLM_API_KEY"])
    assert {k: v for k, v in after.items() if k != "VLLM_API_KEY"} == {k: v for k, v in before.items() if k != "VLLM_API_KEY"}
    assert after["VLLM_API_KEY"] not in result.stdout + result.stderr
    assert stat.S_IMODE((tmp_path / ".env").stat().st_mode) == 0o600


def test_secrets_rotate_unknown_name(tmp_path):
    assert run_cli("init", cwd=tmp_path).returncode == 0
    assert_one_line_error(run_cli("secrets", "rotate", "NOPE", cwd=tmp_path), "NOPE", "VLLM_API_KEY")
    assert_one_line_error(run_cli("secrets", "rotate", "HF_TOKEN", cwd=tmp_path), "HF_TOKEN")


def test_init_then_render_gives_a_compose_project(tmp_path):
    assert run_cli("init", "--hardware", "dgx-spark", "--model", "qwen3.6-35b-a3b-fp8", cwd=tmp_path).returncode == 0
    result = run_cli("render", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    compose = tmp_path / "docker-compose.yml"
    validation = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec", str(compose)],
        capture_output=True, text=True, check=False,
    )
    assert validation.returncode == 0, validation.stdout + validation.stderr
    text = compose.read_text()
    for secret in read_env(tmp_path / ".env").values():
        if secret:
            assert secret not in text


def test_render_on_a_host_without_docker_still_writes_the_compose_project(tmp_path):
    # The first H100 run's host had no docker CLI: `render` read the vLLM image's ENTRYPOINT
    # through python-on-whales, which raised ClientNotFoundError as a traceback.
    no_docker = tmp_path / "bin"
    no_docker.mkdir()
    env = {"PATH": str(no_docker)}
    assert run_cli("init", "--hardware", "h100", "--model", "qwen3-32b", cwd=tmp_path, env=env).returncode == 0
    result = run_cli("render", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "- serve" in (tmp_path / "docker-compose.yml").read_text()


def test_invalid_stack_files_each_give_one_line_and_exit_2(tmp_path):
    cases = {
        "colour: blue\n": ["unknown key 'colour'"],
        "ports:\n  vllm: lots\n": ["ports.vllm", "lots"],
        "hardware: h100-nvl\n": ["hardware", "dgx-spark"],
        "hardware: dgx-spark\nmodel: gpt-oss-120b\n": ["MXFP4", "sm_121"],
        "ports:\n  grafana: 9090\n": ["ports.grafana", "ports.prometheus", "9090"],
        "hardware: [unclosed\n": ["not valid YAML"],
    }
    for text, fragments in cases.items():
        (tmp_path / "stack.yaml").write_text(text)
        assert_one_line_error(run_cli("render", cwd=tmp_path), *fragments)


def test_missing_stack_file_says_to_init(tmp_path):
    assert_one_line_error(run_cli("render", cwd=tmp_path), "stackctl init")


def test_bad_init_choice_writes_nothing(tmp_path):
    assert_one_line_error(run_cli("init", "--hardware", "dgx-spark", "--model", "gpt-oss-120b", cwd=tmp_path), "MXFP4")
    assert not (tmp_path / "stack.yaml").exists() and not (tmp_path / ".env").exists()


def test_compose_runtime_without_docker_engine_is_stopped_by_the_doctor(tmp_path):
    assert run_cli("init", cwd=tmp_path).returncode == 0
    result = run_cli("up", "--runtime", "compose", cwd=tmp_path, env={"DOCKER_HOST": f"unix://{tmp_path}/no.sock"})
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert "fail docker: Cannot connect to the Docker daemon" in result.stderr
    assert "or set runtime: native" in result.stderr  # the fix line
    assert result.stderr.strip().splitlines()[-1].startswith("error: `doctor --fast` found")


def test_compose_runtime_without_docker_engine_says_so_in_one_line(tmp_path):
    assert run_cli("init", cwd=tmp_path).returncode == 0
    result = run_cli("up", "--runtime", "compose", "--skip-checks", cwd=tmp_path,
                     env={"DOCKER_HOST": f"unix://{tmp_path}/no.sock"})
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert result.stderr.strip().splitlines()[-2] == "starting anyway (--skip-checks)"
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Docker" in errors[0] and "--runtime native" in errors[0], result.stderr


def test_python_dash_m_and_dir_option(tmp_path):
    stack_dir = tmp_path / "stack"
    result = run_cli("--dir", str(stack_dir), "init", "--model", "qwen3-32b-awq", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (stack_dir / "stack.yaml").exists() and (stack_dir / ".env").exists()
