"""`flowstate bench arena`: MemoryArena with FlowState and its baselines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from flowstate.cli.common import fails_cleanly
from flowstate.errors import UsageError
from flowstate_bench.arena.data import CONFIGS
from flowstate_bench.options import progress_bar, strategy_list
from flowstate_bench.strategy_names import ARENA as STRATEGIES

if TYPE_CHECKING:
    from rich.console import Console

    from flowstate_bench.arena.runner import ArenaRunner, TaskRun

_folder = click.Path(path_type=Path, file_okay=False)


@click.command()
@click.option("--config", "config_name", type=click.Choice([*CONFIGS, "all"]), required=True)
@click.option(
    "--data",
    type=_folder,
    envvar="FLOWSTATE_ARENA_DATA",
    required=True,
    help="Holds <config>/data.jsonl (or <config>.jsonl) as the HF dataset lays it out.",
)
@click.option(
    "--agent",
    type=click.Choice(["oracle", "forgetful", "llm"]),
    default="oracle",
    show_default=True,
    help="Scripted oracle/forgetful agents run offline; llm uses --model.",
)
@click.option(
    "--strategy",
    "strategies",
    default=",".join(STRATEGIES),
    show_default=True,
    callback=strategy_list(STRATEGIES),
    help="Comma-separated strategies to run side by side.",
)
@click.option("--model", help="litellm model string of the task agent (--agent llm).")
@click.option("--judge-model", help="litellm model judging formal answers; default exact match.")
@click.option("--trials", type=click.IntRange(1), default=1, show_default=True)
@click.option("--tasks", "limit", type=click.IntRange(1), help="Only the first N tasks per config.")
@click.option("--task-id", "task_ids", multiple=True, help="Only these task ids (repeatable).")
@click.option(
    "--product-db",
    type=_folder,
    envvar="FLOWSTATE_PRODUCT_DB",
    help="Shopping: items_shuffle.json and product_catalog/.",
)
@click.option(
    "--travel-db",
    type=_folder,
    envvar="FLOWSTATE_TRAVEL_DB",
    help="Travel: the TravelPlanner CSV folder (flights/ optional).",
)
@click.option(
    "--cache-dir",
    type=_folder,
    envvar="FLOWSTATE_ARENA_CACHE",
    help="Where the shopping search index is built once and kept [~/.cache/flowstate/arena].",
)
@click.option("--out", type=_folder, default=Path("bench-out/arena"), show_default=True)
@click.option("--keep-memory", is_flag=True, help="Keep the FlowState namespaces afterwards.")
@click.option("--temperature", type=float, help="Sampling temperature of the task agent.")
@click.option("--json", "as_json", is_flag=True, help="Print the JSON report instead.")
@fails_cleanly
def arena(
    config_name: str,
    data: Path,
    agent: str,
    strategies: list[str],
    model: str | None,
    judge_model: str | None,
    trials: int,
    limit: int | None,
    task_ids: tuple[str, ...],
    product_db: Path | None,
    travel_db: Path | None,
    cache_dir: Path | None,
    out: Path,
    keep_memory: bool,
    temperature: float | None,
    as_json: bool,
) -> None:
    """Run MemoryArena tasks with FlowState and the baselines, and score them.

    \b
    Examples:
      flowstate bench arena --config all --data bench/tests/fixtures/memoryarena --agent oracle \\
        --product-db bench/tests/fixtures/memoryarena/product_db \\
        --travel-db bench/tests/fixtures/memoryarena/travel_db
      flowstate bench arena --config formal_reasoning_math --data ~/memoryarena \\
        --agent llm --model gpt-5-mini --judge-model gpt-5-mini --strategy flowstate,full
    """
    from rich.console import Console

    from flowstate_bench.arena.data import ArenaData
    from flowstate_bench.arena.report import build_report, write_report
    from flowstate_bench.arena.runner import ArenaRunner, RunConfig

    if limit is not None and task_ids:
        raise UsageError("use --tasks or --task-id, not both")
    config = RunConfig(
        configs=list(CONFIGS) if config_name == "all" else [config_name],
        strategies=strategies,
        agent=agent,  # type: ignore[arg-type]
        model=model,
        judge_model=judge_model,
        trials=trials,
        limit=limit,
        task_ids=list(task_ids) or None,
        product_db=product_db,
        travel_db=travel_db,
        cache_dir=cache_dir or Path.home() / ".cache" / "flowstate" / "arena",
        keep_memory=keep_memory,
        model_kwargs={} if temperature is None else {"temperature": temperature},
    )
    console = Console(stderr=True)
    store = _connect(console) if "flowstate" in strategies else None
    try:
        runner = ArenaRunner(config, ArenaData(data), store)
        runs = _run_with_progress(runner, console)
    finally:
        if store is not None:
            store.close()
    report = build_report(config, runs, runner.resources.judge, runner.replays())
    path = write_report(report, out)
    if as_json:
        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
        return
    for name, per in report["configs"].items():
        for strategy, m in per.items():
            click.echo(
                f"{name:<22} {strategy:<9} SR {m['sr']:.2f}  PS {m['ps']:.2f}  tokens {m['tokens']}"
            )
    console.print(f"Report: {path}")


def _connect(console: Console):  # noqa: ANN202 - the Store type is imported lazily
    from flowstate.local.embedded import resolve_database
    from flowstate.settings import LocalServerSettings, Neo4jSettings
    from flowstate.store import Store

    settings = resolve_database(Neo4jSettings(), LocalServerSettings(), console.print)
    return Store.connect(settings)


def _run_with_progress(runner: ArenaRunner, console: Console) -> list[TaskRun]:
    total = runner.total_subtasks()
    if total == 0:
        raise UsageError("no tasks match --tasks/--task-id")
    with progress_bar(console) as bar:
        job = bar.add_task("MemoryArena", total=total)
        runner.progress = lambda text: bar.update(job, advance=1, description=text)
        return runner.run()
