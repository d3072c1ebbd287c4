"""What an engine bundle keeps and leaves out, on a real pip report: vLLM 0.24.0 + torch 2.11.0
resolved for CPython 3.12 on x86_64 (`pip install --dry-run --report`, stripped to the fields
the logic reads: names, versions, requirements among the resolved packages, files, sha256)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stackctl.engine.bundle_graph import BundleError, Resolution, parse_report
from stackctl.engine.bundle_lean import lean_rules
from stackctl.engine.bundle_selection import SelectionRules, select

REPORT = Path(__file__).resolve().parents[2] / "data" / "bundle" / "vllm-0.24.0-cp312-x86_64-report.json"

# torch 2.11.0's own dependency closure on Linux x86_64 (its METADATA, with cuda-toolkit's extras).
TORCH_CLOSURE = {
    "torch", "triton", "filelock", "typing-extensions", "setuptools", "sympy", "mpmath", "networkx", "jinja2",
    "markupsafe", "fsspec", "cuda-toolkit", "cuda-bindings", "cuda-pathfinder", "nvidia-cublas", "nvidia-cuda-cupti",
    "nvidia-cuda-nvrtc", "nvidia-cuda-runtime", "nvidia-cudnn-cu13", "nvidia-cufft", "nvidia-cufile", "nvidia-curand",
    "nvidia-cusolver", "nvidia-cusparse", "nvidia-cusparselt-cu13", "nvidia-nccl-cu13", "nvidia-nvjitlink",
    "nvidia-nvshmem-cu13", "nvidia-nvtx",
}

# What served vLLM 0.24.0 on the H100 of issue 20 (torch 2.11 preinstalled), beside the host's own.
HAND_MADE_LEAN = {
    "vllm", "xgrammar", "llguidance", "openai-harmony", "openai", "apache-tvm-ffi", "pydantic", "pydantic-core",
    "pyzmq", "cbor2", "watchfiles", "blake3", "jiter", "msgspec", "model-hosting-container-standards", "dill",
    "fastapi", "httpx2", "pybase64", "uvicorn", "httpcore2", "starlette", "depyf", "setproctitle",
    "python-multipart", "astor", "jmespath", "prometheus-fastapi-instrumentator", "cachetools", "truststore",
    "typing-inspection", "annotated-types", "partial-json-parser", "sniffio",
}
H100_LISTED = ("transformers tokenizers numpy aiohttp httpx tiktoken sentencepiece safetensors psutil regex pillow "
               "protobuf pyyaml prometheus-client requests huggingface-hub triton numba cloudpickle einops typer rich")


@pytest.fixture(scope="module")
def resolution() -> Resolution:
    return parse_report(json.loads(REPORT.read_text()))


def kept(selection) -> set[str]:
    return {package.name for package in selection.kept}


def reasons(selection) -> dict[str, str]:
    return {item.name: item.reason for item in selection.left_out}


def test_the_report_is_the_target_s_resolution(resolution):
    assert resolution.environment["python_version"] == "3.12"  # pip ran with the target's markers
    assert resolution.packages["vllm"].version == "0.24.0" and resolution.packages["torch"].version == "2.11.0"
    assert sorted(resolution.roots) == ["torch", "vllm"]
    assert resolution.packages["vllm"].filename == "vllm-0.24.0-cp38-abi3-manylinux_2_28_x86_64.whl"
    assert len(resolution.packages["vllm"].sha256) == 64


def test_without_rules_everything_resolved_is_bundled(resolution):
    selection = select(resolution, SelectionRules())
    assert kept(selection) == set(resolution.packages) and not selection.left_out
    assert selection.torch_bundled and selection.kept[0].name == "vllm"


def test_reusing_torch_leaves_out_torch_and_exactly_its_own_dependencies(resolution):
    selection = select(resolution, SelectionRules(reuse_torch=True))
    assert set(reasons(selection)) == TORCH_CLOSURE
    assert reasons(selection)["torch"] == "reused: the host has torch 2.11.0"
    assert reasons(selection)["nvidia-cublas"] == "the host's torch depends on it"
    assert not selection.torch_bundled
    # vLLM's own heavy dependencies are not torch's: they stay (no --lean here).
    assert {"vllm", "flashinfer-python", "torchvision", "numpy", "transformers"} <= kept(selection)


def test_extras_and_markers_are_evaluated_for_the_target(resolution):
    # nvidia-cublas comes only through torch's cuda-toolkit[cublas,...] extra.
    assert any(edge.extras >= {"cublas", "cudart", "nvtx"} for edge in resolution.parents("cuda-toolkit"))
    assert "nvidia-cublas" in resolution.reachable(["torch"])
    # vLLM needs six only on Python > 3.11, llguidance only on some machines.
    assert [edge.parent for edge in resolution.parents("six")] == ["vllm"]
    on_311 = Resolution.of(resolution.packages, {**resolution.environment, "python_version": "3.11"})
    assert on_311.parents("six") == [] and "six" not in on_311.reachable(["vllm", "torch"])
    on_s390x = Resolution.of(resolution.packages, {**resolution.environment, "platform_machine": "s390x"})
    assert "vllm" not in {edge.parent for edge in on_s390x.parents("llguidance")}
    assert "vllm" in {edge.parent for edge in on_311.parents("llguidance")}


def test_an_extra_counts_only_when_a_walked_package_asks_for_it(resolution):
    # pycountry comes only with pydantic-extra-types[pycountry], which only mistral-common asks for.
    assert {(edge.parent, edge.when) for edge in resolution.parents("pycountry")} == {("pydantic-extra-types",
                                                                                      "pycountry")}
    assert "pycountry" in resolution.reachable(["mistral-common"])
    without_mistral = resolution.reachable(["vllm"], blocked=frozenset({"mistral-common"}))
    assert "pydantic-extra-types" in without_mistral and "pycountry" not in without_mistral  # fastapi[standard]


def test_lean_leaves_out_every_listed_kernel_package_and_what_only_they_need(resolution):
    rules = lean_rules()
    selection = select(resolution, SelectionRules(reuse_torch=True, lean=rules))
    why = reasons(selection)
    listed = {name for name in resolution.packages if rules.rule_for(name)}
    assert {"flashinfer-python", "flashinfer-cubin", "tilelang", "nvidia-cutlass-dsl", "nvidia-cutlass-dsl-libs-cu13",
            "quack-kernels", "humming-kernels", "tokenspeed-mla", "nvidia-cudnn-frontend", "fastsafetensors",
            "torchaudio", "torchvision", "opencv-python-headless", "mistral-common", "opentelemetry-sdk",
            "mcp"} <= listed
    for name in listed:
        assert why[name] == f"lean: {rules.rule_for(name).why}"
    assert why["z3-solver"] == "lean: needed only by tilelang"
    assert why["tokenspeed-triton"] == "lean: needed only by tokenspeed-mla"
    assert why["grpcio"] == "lean: needed only by opentelemetry-exporter-otlp-proto-grpc"
    assert not kept(selection) & listed
    # What is kept is closed: every dependency of a kept package is kept, on the host (torch's)
    # or one of the listed packages (which is why a lean bundle installs with --no-deps).
    for package in selection.kept:
        for edge in resolution.edges(package.name):
            if edge.when == "":
                assert edge.child in kept(selection) | listed or why[edge.child].startswith(("the host's", "reused"))
    # The server's own imports that the H100 run needed are all there.
    assert HAND_MADE_LEAN <= kept(selection) | TORCH_CLOSURE


def test_lean_needs_the_flashinfer_sampler_off():
    assert lean_rules().environment_values() == {"VLLM_USE_FLASHINFER_SAMPLER": "0"}


def test_host_packages_are_left_out_where_every_requirement_accepts_the_host_s_version(resolution):
    host = {"numpy": "2.3.5", "transformers": "5.17.0", "Pillow": "13.0.0", "aiohttp": "3.9.0", "vllm": "0.23.0"}
    selection = select(resolution, SelectionRules(host_packages=host))
    why = reasons(selection)
    assert why["numpy"] == why["transformers"] == why["pillow"] == "on the host (--host-packages)"
    assert {"aiohttp", "vllm"} <= kept(selection)  # vLLM needs aiohttp>=3.13.3; vllm==0.24.0 is the point
    wanted = {item.name: item for item in selection.host_requirements}
    assert set(wanted) == {"numpy", "transformers", "pillow"}
    assert wanted["transformers"].version == "5.17.0" and ">=5.5.3" in wanted["transformers"].specifier


def test_a_cuda_torch_listed_by_the_host_counts_as_the_release_vllm_pins(resolution):
    selection = select(resolution, SelectionRules(host_packages={"torch": "2.11.0+cu130"}))
    assert reasons(selection)["torch"] == "on the host (--host-packages)" and not selection.torch_bundled
    other = select(resolution, SelectionRules(host_packages={"torch": "2.10.0+cu130"}))
    assert other.torch_bundled


def test_lean_with_the_h100_host_lands_near_the_hand_made_set(resolution):
    # The H100's packages (issue 20) with what they depend on, as its freeze would list them.
    listed = resolution.reachable(H100_LISTED.split())
    host = {name: resolution.packages[name].version for name in listed} | {"transformers": "5.17.0"}
    selection = select(resolution, SelectionRules(reuse_torch=True, lean=lean_rules(), host_packages=host))
    ours = kept(selection)
    # The bundle holds every package the hand-made set needed that the host lacks...
    assert HAND_MADE_LEAN - set(host) <= ours
    # ...and a few small ones the hand-made set did without, each required by vLLM or a kept
    # package's metadata (the import check cannot prove a serve-time path never needs them).
    extra = ours - HAND_MADE_LEAN
    assert extra == {
        "compressed-tensors", "loguru",  # compressed-tensors checkpoints
        "uvloop",  # vllm/v1/utils.py imports it: the H100 must have had it
        "py-cpuinfo",  # vllm/usage/usage_lib.py imports it
        "ijson", "ninja", "python-json-logger", "six", "jsonschema",  # vLLM's own requirements, small
        "jsonschema-specifications", "referencing", "rpds-py",  # jsonschema's
        "supervisor",  # model-hosting-container-standards'

        "httptools", "websockets", "python-dotenv",  # uvicorn[standard]
        "fastar", "pydantic-extra-types", "pydantic-settings", "email-validator", "dnspython",  # fastapi[standard]
    }


def test_a_report_in_another_format_is_refused():
    with pytest.raises(BundleError, match="upgrade pip"):
        parse_report({"version": "2", "install": []})
