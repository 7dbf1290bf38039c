"""`flowstate bench arena`: MemoryArena with FlowState and its baselines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from flowstate.cli.common import fails_cleanly
from flowstate.errors import UsageError
from flowstate_bench.arena.choices import CONFIGS, SCORINGS, Scoring
from flowstate_bench.options import (
    SharedOptions,
    connect_store,
    progress_bar,
    shared_options,
    strategy_list,
)
from flowstate_bench.strategy_names import ALIASES, FLOWSTATE_VARIANTS
from flowstate_bench.strategy_names import ARENA as STRATEGIES

if TYPE_CHECKING:
    from rich.console import Console

    from flowstate.models.records import Usage
    from flowstate.store import Store
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
    "--strategy",
    "strategies",
    default="all",
    show_default=True,
    callback=strategy_list(STRATEGIES, tuple(ALIASES)),
    help="Comma-separated strategies to run side by side, or all.",
)
@click.option("--model", help="litellm model string of the task agent (--agent llm).")
@click.option("--judge-model", help="litellm model judging formal answers; default exact match.")
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
@click.option(
    "--scoring",
    type=click.Choice(SCORINGS),
    default="code",
    show_default=True,
    help="Shopping success: reward 1.0 as MemoryArena's code counts it, or the paper's "
    "target product only.",
)
@click.option("--out", type=_folder, default=Path("bench-out/arena"), show_default=True)
@shared_options
@fails_cleanly
def arena(
    config_name: str,
    data: Path,
    strategies: list[str],
    model: str | None,
    judge_model: str | None,
    product_db: Path | None,
    travel_db: Path | None,
    cache_dir: Path | None,
    scoring: Scoring,
    out: Path,
    **shared: Any,
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
    from flowstate_bench.harness import Journal, data_fingerprint

    opts = SharedOptions(**shared)
    if opts.limit is not None and opts.task_ids:
        raise UsageError("use --tasks or --task-id, not both")
    config = RunConfig(
        configs=list(CONFIGS) if config_name == "all" else [config_name],
        strategies=strategies,
        model=model,
        judge_model=judge_model,
        task_ids=list(opts.task_ids) or None,
        product_db=product_db,
        travel_db=travel_db,
        cache_dir=cache_dir or Path.home() / ".cache" / "flowstate" / "arena",
        scoring=scoring,
        **opts.run_fields(),
    )
    console = Console(stderr=True)
    store = connect_store(console) if set(strategies) & set(FLOWSTATE_VARIANTS) else None
    try:
        arena_data = ArenaData(data)
        rows = [arena_data.rows_path(c) for c in config.configs]
        journal = Journal(out, "arena", config, fresh=opts.fresh, data=data_fingerprint(*rows))
        runner = ArenaRunner(config, arena_data, store, journal=journal)
        if config.agent == "llm" or config.memory_model or config.judge_model:
            _ask(runner, store, opts.yes)
        runs = _run_with_progress(runner, console)
    finally:
        if store is not None:
            store.close()
    report = build_report(config, runs, runner.resources.judge, runner.replays())
    path = write_report(report, out)
    if opts.as_json:
        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
        return
    for name, per in report["configs"].items():
        for strategy, m in per.items():
            click.echo(
                f"{name:<22} {strategy:<16} SR {m['sr']:.2f}  PS {m['ps']:.2f}  "
                f"tokens {m['tokens']}  memory {m['memory_tokens']}+{m['embedding_tokens']}e"
            )
    console.print(f"Report: {path}")


def _ask(runner: ArenaRunner, store: Store | None, yes: bool) -> None:
    """The expected spend (the scripted oracle on a sample, scaled), then whether to go on."""
    from flowstate.tokens import count_tokens
    from flowstate_bench.arena.runner import ArenaRunner
    from flowstate_bench.realrun import ask

    c = runner.config
    judge = (c.price_model or c.judge_model) if c.judge_model else None

    def make_dry(update: dict[str, Any]) -> ArenaRunner:
        dry = ArenaRunner(c.model_copy(update={**update, "judge_model": None}), runner.data, store)
        dry.resources = runner.resources  # the databases, opened once
        return dry

    def extra(run: TaskRun) -> dict[str, Usage]:
        if not (judge and run.config.startswith("formal_reasoning")):
            return {}
        # One judge call per subtask: the question, the answer and the gold answer.
        task = next(t for t in runner.tasks(run.config) if t.id == run.task_id)
        sent = sum(count_tokens(q) + 2 * count_tokens(str(a)) + 60
                   for q, a in zip(task.questions, task.answers, strict=False))  # fmt: skip
        n = len(task)
        from flowstate.models.records import Usage

        return {"judge": Usage(prompt_tokens=sent, completion_tokens=5 * n, calls=n)}

    ask(runner, make_dry, yes, extra, {"judge": judge})


def _run_with_progress(runner: ArenaRunner, console: Console) -> list[TaskRun]:
    total = runner.total_subtasks()
    if total == 0:
        raise UsageError("no tasks match --tasks/--task-id")
    with progress_bar(console) as bar:
        job = bar.add_task("MemoryArena", total=total)
        runner.say = lambda text: bar.update(job, advance=1, description=text)
        return runner.run()
