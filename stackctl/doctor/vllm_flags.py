"""vLLM flags: the composed command line through vLLM's own parser (where an engine venv
exists), and a static check that the tool-call parser matches the model family."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from stackctl.doctor.context import DoctorContext
from stackctl.doctor.result import CheckResult, fail, ok, warn
from stackctl.doctor.served_model import model_facts
from stackctl.engine.install import default_engine_dir, installed_engine
from stackctl.models.family import FAMILY_PARSERS, model_family
from stackctl.vllm_args import vllm_args
from stackctl.vllm_settings import local_model_dir

PARSE_TIMEOUT_S = 120
_PARSE_SCRIPT = Path(__file__).with_name("_vllm_parse.py")

def check_tool_parser(ctx: DoctorContext) -> CheckResult:
    name = "tool-parser"
    profile = ctx.config.model_profile
    parser = _flag_value(_composed_args(ctx), "--tool-call-parser") or profile.tool_call_parser
    facts = model_facts(ctx)
    model_type = facts.shape.model_type if facts.shape else None
    family = model_family(model_type, profile.hf_id or profile.name)
    if profile.hf_id is None and not ctx.config.vllm.model_path:
        family = "hermes-json"  # the demo model's chat template writes hermes-style calls
    if family is None:
        return warn(name, f"--tool-call-parser {parser}; model family of {profile.hf_id or profile.name} unknown",
                    "check the model card for the tool-call format vLLM should parse")
    expected = FAMILY_PARSERS[family]
    if parser not in expected:
        return fail(name, f"--tool-call-parser {parser}, but {profile.hf_id or profile.name} writes {family} tool calls "
                    "(the wrong parser drops them silently)",
                    f"use --tool-call-parser {min(expected)} (remove the override from vllm.extra_args)")
    return ok(name, f"--tool-call-parser {parser} matches {family} ({model_type or profile.name})")


def check_vllm_flags(ctx: DoctorContext) -> CheckResult:
    name = "vllm-flags"
    gpu = ctx.config.hardware_profile.has_gpu
    python = ctx.engine_python or _default_engine_python(ctx)
    if python is None or not Path(python).exists():
        build = "CUDA engine (`stackctl install-engine --cuda`)" if gpu else "engine venv"
        return ok(name, f"no vLLM {build} to parse with (the composed flags are checked when one is installed)")
    args = _composed_args(ctx)
    env_names = sorted(_engine_environment(ctx))
    request = {"args": args, "env": env_names, "platform": "cuda" if gpu else None,
               "architecture": ctx.config.model_profile.architecture}
    try:
        done = subprocess.run(
            [str(python), str(_PARSE_SCRIPT)], input=json.dumps(request),
            capture_output=True, text=True, timeout=PARSE_TIMEOUT_S, check=False,
        )
        answer = json.loads(done.stdout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, ValueError, IndexError, OSError) as error:
        return warn(name, f"could not run vLLM's parser with {python}: {error}",
                    "reinstall the engine (`stackctl engine install`) or remove it")
    version = answer.get("vllm_version", "?")
    if answer.get("error"):
        return fail(name, f"vLLM {version} refuses the command line: {answer['error']}",
                    "fix or remove the flag in vllm.extra_args of stack.yaml (`--dtype auto` lets FP8 checkpoints "
                    "carry their own quantization; patched-build flags do not exist upstream)")
    problems = []
    tool = _flag_value(args, "--tool-call-parser")
    if tool and answer.get("tool_parsers") is not None and tool not in answer["tool_parsers"]:
        problems.append(f"tool-call parser '{tool}' is not registered")
    reasoning = _flag_value(args, "--reasoning-parser")
    if reasoning and answer.get("reasoning_parsers") is not None and reasoning not in answer["reasoning_parsers"]:
        problems.append(f"reasoning parser '{reasoning}' is not registered")
    if answer.get("architecture_known") is False:
        return fail(name, f"vLLM {version} at {python} does not know {request['architecture']} "
                    "(it would stop with \"Model architectures [...] are not supported for now\")",
                    "`stackctl install-engine --cuda` installs a vLLM that serves it (stackctl/profiles/compat.yaml)")
    if answer.get("unknown_env"):
        problems.append(f"unknown environment variables {', '.join(answer['unknown_env'])} (vLLM ignores them)")
    if problems:
        return fail(name, f"vLLM {version}: " + "; ".join(problems),
                    "remove them or use names `vllm serve --help` lists")
    known = f"; its registry knows {request['architecture']}" if answer.get("architecture_known") else ""
    return ok(name, f"vLLM {version} accepts all {len(args)} arguments and {len(env_names)} environment variables{known}")


def _composed_args(ctx: DoctorContext) -> list[str]:
    """The command line `up` would run (a local model directory stands in for a missing HF id)."""
    local = local_model_dir(ctx.config)
    return vllm_args(ctx.config, model_ref=str(local) if local else None)


def _default_engine_python(ctx: DoctorContext) -> Path | None:
    """GPU stacks are checked by the CUDA build that would serve them (its parser knows the GPU
    flags and its registry the model), CPU stacks by the CPU build."""
    if ctx.config.hardware_profile.has_gpu:
        from stackctl.engine.gpu_install import installed_gpu_engines
        from stackctl.runtime.native_engine import serving_gpu_engine

        engine = serving_gpu_engine(ctx.config) or next(iter(installed_gpu_engines()), None)
        return engine.python if engine else None
    info = installed_engine(default_engine_dir())
    return info.python if info else None


def _engine_environment(ctx: DoctorContext) -> set[str]:
    """VLLM_* names the engine will see: the profile's, stack.yaml's vllm.environment, and (native
    runtime) the user's own shell's."""
    names = {key for key, _value in ctx.config.hardware_profile.vllm_environment} | {"VLLM_API_KEY"}
    names |= set(ctx.config.vllm.environment)
    if ctx.runtime.inherits_shell_environment:
        names |= {key for key in ctx.facts.environ if key.startswith("VLLM_")}
    return names


def _flag_value(args: list[str], flag: str) -> str | None:
    """The value vLLM will use: argparse keeps the last occurrence (extra_args come last)."""
    value = None
    for index, arg in enumerate(args):
        if arg == flag and index + 1 < len(args):
            value = args[index + 1]
        elif arg.startswith(flag + "="):
            value = arg.split("=", 1)[1]
    return value
