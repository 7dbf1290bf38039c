"""Command-line pieces the benchmark harnesses share: the `--strategy` list (`all` for every
strategy), the options every harness takes (agent, trials, task selection, memory models,
output), and the progress bar of a long run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

from flowstate.engine.step import AgentConfig
from flowstate_bench.strategy_names import LOCAL_EMBEDDING


def strategy_list(
    choices: Sequence[str], aliases: Sequence[str] = ()
) -> Callable[[click.Context, click.Parameter, str], list[str]]:
    """A click callback parsing `a,b,c` (or `all`) into known strategy names."""

    def parse(ctx: click.Context, param: click.Parameter, value: str) -> list[str]:
        names = [v.strip() for v in value.split(",") if v.strip()]
        if names == ["all"]:
            return list(choices)
        unknown = [n for n in names if n not in choices and n not in aliases]
        if unknown or not names:
            raise click.BadParameter(f"choose from all,{','.join(choices)}; got {value!r}")
        return names

    return parse


F = TypeVar("F", bound=Callable[..., Any])


def shared_options(fn: F) -> F:
    """The options both harnesses take, in one place (applied bottom-up)."""
    options = [
        click.option(
            "--agent",
            type=click.Choice(["oracle", "forgetful", "reader", "llm"]),
            default="oracle",
            show_default=True,
            help="Scripted oracle/forgetful/reader agents run offline (a reader run also runs "
            "the oracle, side by side); llm uses --model.",
        ),
        click.option(
            "--trials", type=click.IntRange(1), default=1, show_default=True, help="Runs per task."
        ),
        click.option("--tasks", "limit", type=click.IntRange(1), help="Only the first N tasks."),
        click.option(
            "--task-id", "task_ids", multiple=True, help="Only these task ids (repeatable)."
        ),
        click.option(
            "--memory-model",
            help="litellm model of the memories' own calls (judge, extractors, Mem0's updates); "
            "default --model, or a scripted one with oracle/forgetful agents.",
        ),
        click.option(
            "--embedding-model",
            default=LOCAL_EMBEDDING,
            show_default=True,
            help="litellm embedding model, e.g. text-embedding-3-small; the default is local.",
        ),
        click.option(
            "--embedding-k",
            type=click.IntRange(1),
            default=3,
            show_default=True,
            help="Pieces the embedding baseline retrieves.",
        ),
        click.option(
            "--price-model",
            help="Price token counts as this litellm model (e.g. gpt-4o-mini) when the models "
            "run have no price (scripted, local).",
        ),
        click.option(
            "--keep-memory", is_flag=True, help="Keep the FlowState namespaces afterwards."
        ),
        click.option("--temperature", type=float, help="Sampling temperature of the llm agent."),
        click.option(
            "--prefetch-states",
            type=click.IntRange(0, 64),
            default=AgentConfig().prefetch_states,
            show_default=True,
            help="FlowState opens this many best-matching past states before the first call.",
        ),
        click.option(
            "--recent-observations",
            type=click.IntRange(0),
            default=AgentConfig().recent_observations,
            show_default=True,
            help="FlowState shows this many of a request's latest observations in full; older "
            "ones are cut to their first 300 characters.",
        ),
        click.option(
            "--oracle-waits",
            is_flag=True,
            help="Scripted agents always wait a step for what they open, even when the action "
            "does not need it (the protocol says to act at once).",
        ),
        click.option(
            "--yes", is_flag=True, help="Start a run that calls a real model without asking."
        ),
        click.option(
            "--fresh",
            is_flag=True,
            help="Start over: ignore the finished units --out holds (a run resumes from them).",
        ),
        click.option("--json", "as_json", is_flag=True, help="Print the JSON report instead."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


@dataclass(frozen=True)
class SharedOptions:
    """The values of `shared_options`, and the run-config fields they set."""

    agent: str
    trials: int
    limit: int | None
    task_ids: tuple[str, ...]
    memory_model: str | None
    embedding_model: str
    embedding_k: int
    price_model: str | None
    keep_memory: bool
    temperature: float | None
    prefetch_states: int
    recent_observations: int
    oracle_waits: bool
    yes: bool
    fresh: bool
    as_json: bool

    def run_fields(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "trials": self.trials,
            "limit": self.limit,
            "memory_model": self.memory_model,
            "embedding_model": self.embedding_model,
            "embedding_k": self.embedding_k,
            "price_model": self.price_model,
            "keep_memory": self.keep_memory,
            "model_kwargs": {} if self.temperature is None else {"temperature": self.temperature},
            "prefetch_states": self.prefetch_states,
            "recent_observations": self.recent_observations,
            "one_step": not self.oracle_waits,
        }


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


def connect_store(console: Console):  # noqa: ANN201 - the Store type is imported lazily
    """The Neo4j store FlowState strategies run against: FLOWSTATE_NEO4J_URI, or the managed
    local server (started if needed)."""
    from flowstate.local.embedded import resolve_database
    from flowstate.settings import LocalServerSettings, Neo4jSettings
    from flowstate.store import Store

    settings = resolve_database(Neo4jSettings(), LocalServerSettings(), console.print)
    return Store.connect(settings)
