"""What every command shares: the consoles, the stack directory, the `--runtime` and `--host`
options."""

from __future__ import annotations

import shlex
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from stackctl.config import RuntimeName
from stackctl.layout import StackLayout, find_layout

# soft_wrap: a line is never cut or folded by rich; the terminal wraps it, so what the user must
# copy (a fix, a URL, a command) stays whole.
console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)

RuntimeChoice = Enum("RuntimeChoice", {name: name for name in RuntimeName.__args__}, type=str)  # type: ignore[misc]
RuntimeOption = Annotated[RuntimeChoice | None, typer.Option(help="Override stack.yaml's runtime.")]
HostOption = Annotated[str | None, typer.Option(
    "--host", help="Which of stack.yaml's hosts this is (default: the one whose address is this machine's).")]


def layout_of(ctx: typer.Context) -> StackLayout:
    """The stack directory the root callback chose (`--dir` / STACKCTL_DIR), or the current one."""
    chosen = ctx.find_root().obj
    return chosen if isinstance(chosen, StackLayout) else find_layout(None)


def load_stack(ctx: typer.Context, runtime: RuntimeChoice | None = None,
               host: str | None = None):  # -> Stack (imported lazily)
    from stackctl.stack import Stack

    return Stack.load(layout_of(ctx), runtime.value if runtime else None, host)

def cli_invocation(layout: StackLayout) -> str:
    """How the user ran stackctl, pointed at this stack: the start of a line they can paste."""
    program = Path(sys.argv[0])
    command = f"{shlex.quote(sys.executable)} -m stackctl" if program.name == "__main__.py" else shlex.quote(sys.argv[0])
    root, here = layout.root.resolve(), Path.cwd().resolve()
    if root != here:
        shown = root.relative_to(here) if root.is_relative_to(here) else root
        command += f" -C {shlex.quote(str(shown))}"
    return command
