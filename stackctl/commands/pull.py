"""`stackctl pull`: the model's weights into the HF cache vLLM mounts, with a progress bar
(bytes, rate, ETA); `up` runs the same stage before vLLM starts."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from stackctl.commands._shared import layout_of
from stackctl.config import StackConfig, load_stack_config
from stackctl.layout import StackLayout
from stackctl.pull import PullProgress, PullResult, size_text, stage_weights


def register(app: typer.Typer) -> None:
    app.command("pull")(pull)


def pull(ctx: typer.Context) -> None:
    """Download the model's weights into stack.yaml's hf_cache (resumable; HF_TOKEN from .env)."""
    layout = layout_of(ctx)
    config = load_stack_config(layout.stack_file)
    console = Console(highlight=False, soft_wrap=True)
    result = staged_with_progress(config, layout, console)
    if result is None:
        console.print(f"model '{config.model}' is served from a local directory: nothing to pull")
        return
    report(result, console)


def staged_with_progress(config: StackConfig, layout: StackLayout, console: Console) -> PullResult | None:
    """Stage the weights (None: served from a local directory) with one progress bar."""
    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
               TextColumn("ETA"), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task(f"pulling {config.model_profile.hf_id}", total=None)

        def update(step: PullProgress) -> None:
            progress.update(task, completed=step.done_bytes, total=step.total_bytes or None)

        return stage_weights(config, layout, update)


def report(result: PullResult, console: Console) -> None:
    if result.skipped:
        console.print(f"{result.repo_id}: all {size_text(result.total_bytes)} already in {result.snapshot}")
    else:
        console.print(f"{result.repo_id}: {size_text(result.downloaded_bytes)} downloaded, "
                      f"{size_text(result.total_bytes)} in {result.snapshot}")
