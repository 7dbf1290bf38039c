"""`flowstate bench tau`: tau-bench airline/retail with FlowState and its baselines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from flowstate.cli.common import fails_cleanly
from flowstate.errors import UsageError
from flowstate_bench.options import (
    SharedOptions,
    connect_store,
    progress_bar,
    shared_options,
    strategy_list,
)
from flowstate_bench.strategy_names import ALIASES, FLOWSTATE_VARIANTS
from flowstate_bench.strategy_names import TAU as STRATEGIES
from flowstate_bench.strategy_names import TAU_DEFAULT as DEFAULT_STRATEGIES

if TYPE_CHECKING:
    from rich.console import Console

    from flowstate.models.records import Usage
    from flowstate.store import Store
    from flowstate_bench.tau.runner import Conversation, RunConfig, TauRunner


@click.command()
@click.option("--domain", type=click.Choice(["airline", "retail", "mock"]), required=True)
@click.option("--model", help="litellm model string for --agent llm (and the llm user).")
@click.option(
    "--strategy",
    "strategies",
    default=",".join(DEFAULT_STRATEGIES),
    show_default=True,
    callback=strategy_list(STRATEGIES, tuple(ALIASES)),
    help="Comma-separated strategies to run side by side, or all.",
)
@click.option("--split", help="Only the tasks of a split of split_tasks.json (train, test).")
@click.option(
    "--data",
    type=click.Path(path_type=Path, file_okay=False),
    envvar="FLOWSTATE_TAU_DATA",
    help="The data folder (holds tau2/, tau-v1/, tau2-parity/); required, or FLOWSTATE_TAU_DATA.",
)
@click.option(
    "--fix-multi-item-modify",
    is_flag=True,
    help="Departs from the original: each item of a multi-item modify_pending_order_items "
    "gets its own new price and options (the original gives all the last one's).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("bench-out/tau"),
    show_default=True,
)
@click.option(
    "--user",
    type=click.Choice(["scripted", "llm"]),
    help="Who plays the customer; default scripted, or llm with --agent llm.",
)
@click.option("--user-model", help="litellm model for the llm user; default --model.")
@click.option("--persist", is_flag=True, help="One FlowState memory across a domain's tasks.")
@click.option(
    "--max-turns", type=click.IntRange(1), default=30, show_default=True, help="User turns."
)
@click.option(
    "--max-steps", type=click.IntRange(1), default=30, show_default=True, help="Steps per turn."
)
@click.option(
    "--bm25-k", type=click.IntRange(1), default=5, show_default=True, help="Messages retrieved."
)
@shared_options
@fails_cleanly
def tau(
    domain: str,
    model: str | None,
    strategies: list[str],
    split: str | None,
    data: Path | None,
    out: Path,
    user: str | None,
    user_model: str | None,
    persist: bool,
    max_turns: int,
    max_steps: int,
    bm25_k: int,
    fix_multi_item_modify: bool,
    **shared: Any,
) -> None:
    """Run tau-bench tasks with FlowState and the baselines, and score them.

    \b
    Examples:
      flowstate bench tau --data ../shared/data --domain airline --agent oracle --tasks 5
      flowstate bench tau --domain airline --agent oracle --strategy all --tasks 10
      flowstate bench tau --domain retail --split test --agent llm --model gpt-4o-mini --trials 4
    """
    from rich.console import Console

    from flowstate_bench.harness import Journal, data_fingerprint
    from flowstate_bench.tau.data import TauData
    from flowstate_bench.tau.report import build_report, results_table, write_report
    from flowstate_bench.tau.runner import RunConfig, TauRunner

    opts = SharedOptions(**shared)
    tau_data = TauData.locate(data)
    ids = list(opts.task_ids) or None
    if split is not None:
        in_split = tau_data.split(domain, split)
        ids = [i for i in ids if i in in_split] if ids else in_split
    config = RunConfig(
        domain=domain,
        strategies=strategies,
        model=model,
        user=user,  # type: ignore[arg-type]
        user_model=user_model,
        task_ids=ids,
        persist=persist,
        max_turns=max_turns,
        max_steps=max_steps,
        bm25_k=bm25_k,
        fix_multi_item_modify=fix_multi_item_modify,
        **opts.run_fields(),
    )
    console = Console(stderr=True)
    store = connect_store(console) if set(strategies) & set(FLOWSTATE_VARIANTS) else None
    try:
        data_seen = data_fingerprint(tau_data.domain_dir(domain))
        journal = Journal(out, "tau", config, fresh=opts.fresh, data=data_seen)
        runner = TauRunner(config, tau_data, store, journal=journal)
        if calls_real_model(config):
            _ask(runner, store, opts.yes)
        convs = _run_with_progress(runner, console)
    finally:
        if store is not None:
            store.close()
    report = build_report(config, convs)
    path = write_report(report, out)
    if opts.as_json:
        click.echo(json.dumps(report, indent=2, ensure_ascii=False, default=str))
        return
    Console().print(results_table(report))
    console.print(f"Report: {path}")


def calls_real_model(config: RunConfig) -> bool:
    """Whether a run sends anything to a model named on the command line (a scripted model
    named there too: the path is the same)."""
    return bool(config.agent == "llm" or config.memory_model or config.user_kind == "llm")


def _ask(runner: TauRunner, store: Store | None, yes: bool) -> None:
    """The expected spend (the scripted oracle on a sample, scaled), then whether to go on."""
    from flowstate_bench.realrun import ask
    from flowstate_bench.tau.runner import TauRunner

    c = runner.config
    user = c.price_model or c.user_model or c.model

    def make_dry(update: dict[str, Any]) -> TauRunner:
        dry = c.model_copy(update={**update, "user": "scripted", "user_model": None})
        return TauRunner(dry, runner.data, store)

    def extra(conv: Conversation) -> dict[str, Usage]:
        return {"user": user_usage(runner, conv)} if c.user_kind == "llm" else {}

    ask(runner, make_dry, yes, extra, {"user": user})


def user_usage(runner: TauRunner, conv: Conversation) -> Usage:
    """What an llm user would have spent on this conversation: one call per turn and one to
    end it, each sending its system prompt and the conversation so far."""
    from flowstate.models.records import Usage
    from flowstate.tokens import count_messages, count_tokens
    from flowstate_bench.tau.env import make_env
    from flowstate_bench.tau.plan import derive_plan

    task = next(t for t in runner.data.tasks(runner.config.domain) if t.id == conv.task_id)
    env = make_env(task.domain, runner.data, task, runner.config.env_options)
    said = derive_plan(task, env.WRITE_TOOLS).turns
    system = f"{runner.data.guidelines}\n\n# Your scenario\n{task.scenario.as_prompt()}"
    messages: list[dict[str, str]] = [{"role": "system", "content": system}]
    usage = Usage()
    agent_says = ["Hi! How can I help you today?", *conv.answers]
    for n, message in enumerate(agent_says):
        messages.append({"role": "user", "content": message})
        reply = said[n] if n < len(said) else "###STOP###"
        usage += Usage(
            prompt_tokens=count_messages(messages),
            completion_tokens=count_tokens(reply),
            calls=1,
        )
        messages.append({"role": "assistant", "content": reply})
    return usage


def _run_with_progress(runner: TauRunner, console: Console) -> list[Conversation]:
    c = runner.config
    total = runner.count()
    if total == 0:
        raise UsageError("no tasks match --tasks/--task-id")
    with progress_bar(console) as bar:
        job = bar.add_task(f"tau {c.domain}", total=total)

        def advance(conv: Conversation) -> None:
            mark = "ok" if conv.score.success else "x"
            bar.update(
                job,
                advance=1,
                description=f"tau {c.domain} {conv.strategy} task {conv.task_id}: {mark}",
            )

        runner.progress = advance
        return runner.run()
