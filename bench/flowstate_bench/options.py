"""Command-line pieces the benchmark harnesses share: the `--strategy` list and the progress
bar of a long run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress


def strategy_list(
    choices: Sequence[str],
) -> Callable[[click.Context, click.Parameter, str], list[str]]:
    """A click callback parsing `a,b,c` into known strategy names."""

    def parse(ctx: click.Context, param: click.Parameter, value: str) -> list[str]:
        names = [v.strip() for v in value.split(",") if v.strip()]
        unknown = [n for n in names if n not in choices]
        if unknown or not names:
            raise click.BadParameter(f"choose from {','.join(choices)}; got {value!r}")
        return names

    return parse


def progress_bar(console: Console) -> Progress:
    """Description, bar, done/total and elapsed time; cleared when the run ends."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    return Progress(*columns, console=console, transient=True)
