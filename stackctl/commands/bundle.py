"""`stackctl bundle engine`: the vLLM engine's wheels for a GPU host without network, made on a
connected machine and installed there with `stackctl install-engine --from`."""

from __future__ import annotations

import shlex
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from stackctl.commands._shared import console, layout_of
from stackctl.errors import ConfigError

bundle_app = typer.Typer(no_args_is_help=True, help="Make what a host without network installs.")


class Machine(str, Enum):
    x86_64 = "x86_64"
    aarch64 = "aarch64"


def register(app: typer.Typer) -> None:
    app.add_typer(bundle_app, name="bundle")


@bundle_app.command("engine")
def bundle_engine(
    ctx: typer.Context,
    out: Annotated[Path, typer.Option(help="The directory to write the wheels and stackctl-bundle.json to.")],
    vllm: Annotated[str | None, typer.Option(
        help="The vLLM release (one of the table's CUDA wheels; default: what install-engine pins for the "
             "stack's model, else the newest, or with --reuse-torch the newest that pins that torch).")] = None,
    reuse_torch: Annotated[str | None, typer.Option(
        help="The target already has this torch (PyPI's CUDA build): leave it and its dependencies out.")] = None,
    python_version: Annotated[str | None, typer.Option(
        help="The target's Python, X.Y (default: this one's).")] = None,
    machine: Annotated[Machine | None, typer.Option(help="The target's machine (default: this one's).")] = None,
    glibc: Annotated[str | None, typer.Option(
        help="The target's glibc, X.Y (`ldd --version`; default 2.35, Ubuntu 22.04).")] = None,
    host_packages: Annotated[Path | None, typer.Option(
        help="`python -m pip list --format=freeze` of the target's Python: what it has is left out.")] = None,
    lean: Annotated[bool, typer.Option(
        help="Only what vLLM's OpenAI server imports on the FlashAttention path (see stackctl/engine/lean.yaml).",
    )] = False,
    archive: Annotated[bool, typer.Option(help="Also write everything as one OUT.tar.")] = False,
) -> None:
    """Download the vLLM CUDA engine's wheels for another host (its Python, machine, torch)."""
    from stackctl.engine.bundle import (
        DEFAULT_GLIBC,
        BundleRequest,
        BundleTarget,
        build_bundle,
        choose_vllm,
        parse_freeze,
    )

    here = BundleTarget.this_host()
    target = BundleTarget(_x_y(python_version, "--python-version") if python_version else here.python,
                          machine.value if machine else here.machine,
                          _x_y(glibc, "--glibc") if glibc else DEFAULT_GLIBC)
    row = choose_vllm(vllm, reuse_torch, _architecture(ctx))
    listed = parse_freeze(_read(host_packages), str(host_packages)) if host_packages else {}
    request = BundleRequest(row, target, out, reuse_torch=reuse_torch is not None, host_packages=listed, lean=lean,
                            archive=archive)
    torch = f"torch {row.torch} (CUDA {row.cuda}) " + ("reused from the host" if reuse_torch else "bundled")
    console.print(escape(f"vLLM {row.version} for CPython {target.python} on {target.machine} "
                         f"(glibc >= {target.glibc}): {torch}{', lean' if lean else ''}"))
    with console.status("bundling") as spinner:
        built = build_bundle(request, on_progress=spinner.update)
    _report(built)


def _report(built) -> None:  # built: BuiltBundle
    manifest = built.manifest
    for note in built.notes:
        console.print(escape(f"note: {note}"))
    if manifest.left_out:
        console.print("left out:")
        by_reason: dict[str, list[str]] = {}
        for item in manifest.left_out:
            by_reason.setdefault(item.reason, []).append(f"{item.name} {item.version}")
        for reason, names in sorted(by_reason.items(), key=lambda item: _reason_order(item[0])):
            console.print(escape(f"  {reason}: {', '.join(names)}"))
    from stackctl.pull import size_text

    console.print(escape(f"{len(manifest.files)} wheels, {size_text(manifest.total_bytes)} in {built.directory} "
                         f"({built.downloaded} downloaded, {built.copied} from stackctl's wheelhouse)"))
    if built.archive is not None:
        console.print(escape(f"archive: {built.archive} ({size_text(built.archive.stat().st_size)})"))
    if manifest.environment:
        needs = " ".join(f"{key}={value}" for key, value in manifest.environment.items())
        console.print(escape(f"the engine serves with {needs} (install-engine records it for the runtime)"))
    where = built.archive or built.directory
    python = "" if manifest.torch.bundled else " --python /path/to/python-with-torch"
    console.print(escape(f"on the target: stackctl install-engine --from {shlex.quote(str(where))}{python}"))


def _reason_order(reason: str) -> tuple[int, str]:
    """The reused torch first, then the host's packages, the lean list, what only it needed."""
    order = {"reused:": 0, "the host's torch": 1, "on the host": 2, "lean: needed only by": 4}
    return next((rank for start, rank in order.items() if reason.startswith(start)), 3), reason


def _x_y(value: str, option: str) -> str:
    parts = value.split(".")
    if len(parts) != 2 or not all(part.isdigit() for part in parts):
        raise ConfigError(f"{option} takes X.Y (e.g. 3.12), not {value!r}")
    return value


def _read(path: Path) -> str:
    try:
        return path.expanduser().read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read --host-packages {path}: {exc.strerror or exc}") from None


def _architecture(ctx: typer.Context) -> str | None:
    """The stack's model architecture, when run in a stack directory (install-engine pins for it)."""
    from stackctl.config import load_stack_config

    layout = layout_of(ctx)
    return load_stack_config(layout.stack_file).model_profile.architecture if layout.stack_file.exists() else None
