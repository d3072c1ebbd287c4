"""`stackctl secrets rotate NAME`: replace one generated secret in .env."""

from __future__ import annotations

from typing import Annotated

import typer

from stackctl.commands._shared import console, layout_of

secrets_app = typer.Typer(no_args_is_help=True, help="Manage the secrets in .env.")


def register(app: typer.Typer) -> None:
    app.add_typer(secrets_app, name="secrets")


@secrets_app.command("rotate")
def rotate(ctx: typer.Context, name: Annotated[str, typer.Argument(help="e.g. VLLM_API_KEY")]) -> None:
    """Replace one generated secret (the new value is written to .env, never printed)."""
    from stackctl.envfile import rotate_secret

    layout = layout_of(ctx)
    rotate_secret(layout.env_file, name)
    console.print(f"rotated {name} in {layout.env_file}; restart the stack (`stackctl up`) to use it")
