"""The real vLLM CPU engine, started wrong on purpose: each start fails, and its own log is diagnosed.

Six starts run side by side (a refused choice, a window overflow, a port already taken, a model
directory that is not there, a flag the user added that this engine lacks, a tensor parallel size
the demo model's attention heads cannot be split by); each exits within seconds of importing vLLM.
"""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from stackctl.config import parse_stack_config
from stackctl.diagnosis import Cause, DiagnosisContext, context_for, diagnose_log
from stackctl.engine import (
    default_demo_model_dir,
    default_engine_dir,
    engine_python,
    generate_demo_model,
    vllm_cpu_command,
    vllm_cpu_env,
)
from tests.support.processes import free_port

pytestmark = [pytest.mark.integration, pytest.mark.vllm]

# Argument parsing and config validation fail before any model is loaded: well under a minute.
EXIT_TIMEOUT_S = 300


@dataclass(frozen=True)
class Start:
    model: Path
    port: int
    extra: tuple[str, ...] = ()
    max_model_len: int = 2048


@dataclass(frozen=True)
class FailedStart:
    returncode: int
    lines: list[str]
    context: DiagnosisContext


@dataclass(frozen=True)
class FailedStarts:
    by_name: dict[str, FailedStart]
    # The demo model's max_position_embeddings and attention heads, and the port held while vLLM
    # tried to bind it.
    window: int
    heads: int
    taken_port: int


@pytest.fixture(scope="module")
def demo_model(vllm_engine) -> Path:
    return generate_demo_model(engine_python(default_engine_dir()), default_demo_model_dir())


@pytest.fixture(scope="module")
def failed_starts(vllm_engine, demo_model, tmp_path_factory) -> Iterator[FailedStarts]:
    logs = tmp_path_factory.mktemp("failed-starts")
    shape = json.loads((demo_model / "config.json").read_text())
    window, heads = int(shape["max_position_embeddings"]), int(shape["num_attention_heads"])
    squatter = socket.socket()
    squatter.bind(("127.0.0.1", 0))
    squatter.listen()
    taken = squatter.getsockname()[1]
    starts = {
        "bad-dtype": Start(demo_model, free_port(), ("--dtype", "fp8")),
        "window": Start(demo_model, free_port(), max_model_len=window + 1024),
        "port-taken": Start(demo_model, taken),
        "no-model": Start(logs / "no-such-model", free_port()),
        "users-flag": Start(demo_model, free_port(), ("--lora-path", str(logs))),
        "heads-vs-tp": Start(demo_model, free_port(), ("--tensor-parallel-size", str(heads + 1))),
    }
    processes = {}
    try:
        for name, start in starts.items():
            argv = vllm_cpu_command(default_engine_dir(), start.model, port=start.port, served_name="tiny",
                                    extra_args=start.extra, max_model_len=start.max_model_len)
            with open(logs / f"{name}.log", "wb") as log:
                processes[name] = subprocess.Popen(argv, env=vllm_cpu_env(), stdin=subprocess.DEVNULL, stdout=log,
                                                   stderr=subprocess.STDOUT, start_new_session=True)
        results = {}
        for name, process in processes.items():
            returncode = process.wait(EXIT_TIMEOUT_S)
            context = DiagnosisContext(service="vllm", extra_args=starts[name].extra,
                                       port_keys={starts[name].port: "ports.vllm"})
            results[name] = FailedStart(returncode, (logs / f"{name}.log").read_text().splitlines(), context)
        yield FailedStarts(results, window, heads, taken)
    finally:
        squatter.close()
        for process in processes.values():
            if process.poll() is None:
                process.kill()
                process.wait()


def diagnosed(start: FailedStart):
    assert start.returncode != 0, "the engine was expected to fail"
    diagnosis = diagnose_log(start.lines, start.context)
    assert diagnosis is not None, "\n".join(start.lines[-20:])
    return diagnosis


def test_a_refused_dtype_names_the_flag_and_auto(failed_starts):
    diagnosis = diagnosed(failed_starts.by_name["bad-dtype"])
    assert diagnosis.cause is Cause.refused_choice
    assert (diagnosis.fix.key, diagnosis.fix.flag, diagnosis.fix.value) == ("vllm.extra_args", "--dtype", "auto")
    assert diagnosis.values["refused"] == "fp8"
    assert diagnosis.fix.text.startswith("remove --dtype fp8 from vllm.extra_args")


def test_a_window_overflow_names_the_models_window(failed_starts):
    window = failed_starts.window
    diagnosis = diagnosed(failed_starts.by_name["window"])
    assert diagnosis.cause is Cause.context_window_exceeded
    assert (diagnosis.fix.key, diagnosis.fix.flag, diagnosis.fix.value) == (
        "vllm.max_model_len", "--max-model-len", str(window))
    assert diagnosis.values == {"max_model_len": window + 1024, "window": window}


def test_a_taken_port_names_it_and_its_key(failed_starts):
    taken = failed_starts.taken_port
    diagnosis = diagnosed(failed_starts.by_name["port-taken"])
    assert diagnosis.cause is Cause.port_in_use
    assert diagnosis.values["port"] == taken
    assert (diagnosis.fix.key, diagnosis.fix.flag) == ("ports.vllm", "--port")
    assert f"ss -ltnp 'sport = :{taken}'" in diagnosis.fix.text


def test_a_missing_model_directory_points_at_model_path(failed_starts):
    diagnosis = diagnosed(failed_starts.by_name["no-model"])
    assert diagnosis.cause is Cause.model_not_found
    assert (diagnosis.fix.key, diagnosis.fix.flag) == ("vllm.model_path", "--model")
    assert diagnosis.fix.value is not None and diagnosis.fix.value.endswith("/no-such-model")


def test_a_flag_the_user_added_is_theirs_to_remove_even_where_stack_yaml_no_longer_has_it(failed_starts):
    start = failed_starts.by_name["users-flag"]
    diagnosis = diagnosed(start)
    assert diagnosis.cause is Cause.refused_flag
    assert (diagnosis.fix.key, diagnosis.fix.flag) == ("vllm.extra_args", "--lora-path")
    # Read with a stack.yaml whose extra_args lack it: stackctl's own command does not add it either,
    # so no newer engine is asked for.
    config = parse_stack_config({"hardware": "cpu", "model": "tiny"})
    again = diagnose_log(start.lines, context_for("vllm", config))
    assert (again.fix.key, again.fix.flag) == ("vllm.extra_args", "--lora-path")
    assert again.fix.text.startswith("remove --lora-path from vllm.extra_args")


def test_a_tensor_parallel_size_the_heads_cannot_be_split_by_names_a_divisor(failed_starts):
    heads = failed_starts.heads
    diagnosis = diagnosed(failed_starts.by_name["heads-vs-tp"])
    assert diagnosis.cause is Cause.tp_heads_not_divisible
    assert diagnosis.values == {"heads": heads, "tensor_parallel_size": heads + 1}
    assert (diagnosis.fix.key, diagnosis.fix.flag) == ("vllm.extra_args", "--tensor-parallel-size")
    assert diagnosis.fix.value is not None and heads % int(diagnosis.fix.value) == 0
