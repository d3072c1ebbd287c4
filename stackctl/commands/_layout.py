"""The stack directory the root callback chose (`--dir` / STACKCTL_DIR), or the current one."""

from __future__ import annotations

import typer

from stackctl.layout import StackLayout, find_layout


def layout_of(ctx: typer.Context) -> StackLayout:
    chosen = ctx.find_root().obj
    return chosen if isinstance(chosen, StackLayout) else find_layout(None)
