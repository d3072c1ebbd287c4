"""Command line and environment for vLLM's CPU engine."""

from pathlib import Path

from stackctl.engine import vllm_cpu_command, vllm_cpu_env


def test_command_runs_the_module_with_the_engine_python():
    argv = vllm_cpu_command(
        Path("/e"), Path("/m"), port=8001, served_name="tiny", extra_args=["--seed", "1"]
    )
    assert argv[:3] == ["/e/bin/python", "-m", "vllm.entrypoints.openai.api_server"]
    joined = " ".join(argv)
    assert "--model /m" in joined
    assert "--served-model-name tiny" in joined
    assert "--host 127.0.0.1 --port 8001" in joined
    assert "--enforce-eager" in argv
    assert argv[-2:] == ["--seed", "1"]  # extra args last, so they can override defaults


def test_api_key_goes_in_the_environment_never_argv():
    argv = vllm_cpu_command(Path("/e"), Path("/m"), port=1, served_name="t")
    assert not any("api-key" in arg or "api_key" in arg for arg in argv)
    env = vllm_cpu_env(api_key="s3cret", base={})
    assert env["VLLM_API_KEY"] == "s3cret"


def test_no_api_key_drops_an_inherited_one():
    env = vllm_cpu_env(base={"VLLM_API_KEY": "leaked", "PATH": "/bin"})
    assert "VLLM_API_KEY" not in env
    assert env["PATH"] == "/bin"


def test_cpu_environment_is_offline_and_sized():
    env = vllm_cpu_env(kvcache_gib=2, base={})
    assert env["VLLM_CPU_KVCACHE_SPACE"] == "2"
    assert env["HF_HUB_OFFLINE"] == "1"
    assert env["VLLM_HOST_IP"] == "127.0.0.1"
