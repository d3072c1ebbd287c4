"""`stackctl init`: stack.yaml with the user's choices, .env with generated secrets."""

from __future__ import annotations

from typing import Annotated

import typer

from stackctl.commands._shared import RuntimeChoice, console, layout_of


def register(app: typer.Typer) -> None:
    app.command()(init)


def init(
    ctx: typer.Context,
    hardware: Annotated[str | None, typer.Option(help="Hardware profile (see `stackctl profiles`).")] = None,
    model: Annotated[str | None, typer.Option(
        help="Model profile (see `stackctl profiles`), hf:ORG/NAME or a model directory (profile derived from "
             "its config.json).")] = None,
    runtime: Annotated[RuntimeChoice | None, typer.Option(help="How services run.")] = None,
    hostname: Annotated[str | None, typer.Option(help="Public DNS name, for TLS.")] = None,
    demo: Annotated[bool, typer.Option(help="CPU demo stack: tiny local model, native runtime.")] = False,
    force: Annotated[bool, typer.Option(help="Rewrite stack.yaml (secrets in .env are always kept).")] = False,
) -> None:
    """Write stack.yaml and .env (generated secrets, mode 0600). Safe to run again."""
    from stackctl.config import StackConfig
    from stackctl.models.source import is_model_reference
    from stackctl.usecases.init_stack import DEMO_CHOICES, init_stack

    choices: dict = dict(DEMO_CHOICES) if demo else {}
    for key, value in {"hardware": hardware, "model": model, "hostname": hostname}.items():
        if value is not None:
            choices[key] = value
    if runtime is not None:
        choices["runtime"] = runtime.value
    layout = layout_of(ctx)
    if model is not None and is_model_reference(model):
        from stackctl.usecases.derive_model import derive_model

        derived = derive_model(layout, model, choices.get("hardware", StackConfig.model_fields["hardware"].default))
        print_derivation(derived)
        choices.update(derived.settings)
    result = init_stack(layout, choices, force=force)
    verb = "wrote" if result.stack_file_written else "kept existing"
    console.print(f"{verb} {layout.stack_file}")
    if result.secrets.created:
        console.print(f"generated {', '.join(result.secrets.created)} in {layout.env_file} (mode 0600)")
    if result.secrets.kept:
        console.print(f"kept existing {', '.join(result.secrets.kept)}")
    if result.secrets.tightened_mode:
        console.print(f"tightened {layout.env_file} to mode 0600")
    if result.gitignore_changed:
        console.print(f"added .env to {layout.root / '.gitignore'}")
    console.print("next: `stackctl render` (Compose project) or `stackctl up`")


def print_derivation(derived) -> None:  # DerivedModel (imported lazily)
    console.print(f"model profile '{derived.derivation.name}' derived from {derived.reference}'s config.json "
                  f"(hardware: {derived.hardware}):")
    for choice in derived.derivation.choices:
        console.print(f"  {choice.setting}: {choice.value}  ({choice.reason})", markup=False)
    for line in derived.derivation.to_choose:
        console.print(f"[yellow]  {line}[/yellow]")
