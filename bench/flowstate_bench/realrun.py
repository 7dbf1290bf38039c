"""Before a run that calls a real model: what it is expected to cost, and the question whether
to go on.

The estimate is measured, not guessed: the same harness runs the scripted oracle offline on a
few tasks of each group (every strategy, the real engine and memories), and its calls and
tokens are scaled to the units still to run, then priced with litellm's price map. The oracle
takes the shortest path and writes short replies, so a real model makes at least as many calls
and more completion tokens: the figures are a floor.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import click

from flowstate.errors import UsageError
from flowstate.models.records import Usage
from flowstate_bench.costs import cost_usd
from flowstate_bench.harness import Harness, Unit

SAMPLE_TASKS = 2  # tasks per group the offline estimate runs


Parts = dict[str, Usage]  # "agent", "memory", "embedding", "user", "judge" -> their calls


@dataclass
class Line:
    """One group and strategy: the expected spend of its remaining units, per part."""

    group: str
    strategy: str
    units: int
    parts: Parts = field(default_factory=dict)
    cost: float | None = 0.0

    @property
    def calls(self) -> int:
        return sum(u.calls for u in self.parts.values())

    @property
    def tokens(self) -> int:
        return sum(u.total_tokens for u in self.parts.values())


@dataclass
class Estimate:
    lines: list[Line]
    sampled: int  # tasks per group run offline

    @property
    def calls(self) -> int:
        return sum(ln.calls for ln in self.lines)

    @property
    def tokens(self) -> int:
        return sum(ln.tokens for ln in self.lines)

    @property
    def cost(self) -> float | None:
        costs = [ln.cost for ln in self.lines]
        return None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)

    def text(self, model: str) -> str:
        rows = [
            f"Expected spend of this run on {model} (a floor: the scripted oracle's calls and "
            f"tokens on {self.sampled} task(s) per group, scaled to the units to run):",
            f"  {'group':<24}{'strategy':<18}{'units':>6}{'calls':>9}{'tokens':>13}{'USD':>10}",
        ]
        for ln in self.lines:
            rows.append(
                f"  {ln.group:<24}{ln.strategy:<18}{ln.units:>6}{ln.calls:>9,}{ln.tokens:>13,}"
                f"{_usd(ln.cost):>10}"
            )
        rows.append(f"  {'total':<48}{self.calls:>9,}{self.tokens:>13,}{_usd(self.cost):>10}")
        if self.cost is None:
            rows.append("  ('-': litellm has no price for the model; --price-model prices it)")
        return "\n".join(rows)


def _usd(value: float | None) -> str:
    return "-" if value is None else f"{value:,.2f}"


def scale(usage: Usage, factor: float) -> Usage:
    return Usage(
        prompt_tokens=round(usage.prompt_tokens * factor),
        completion_tokens=round(usage.completion_tokens * factor),
        calls=round(usage.calls * factor),
        estimated_prompt_tokens=round(usage.estimated_prompt_tokens * factor),
    )


def estimate(
    runner: Harness[Any],
    dry: Harness[Any],
    todo: Iterable[Unit],
    spend: Callable[[Any], Parts],
    prices: Callable[[str], dict[str, str | None]],
) -> Estimate:
    """Run `dry` (the scripted oracle on a sample) and scale its spend per group and strategy
    to `todo`. `spend(result)` splits a result's usage into its parts; `prices(strategy)`
    names the model pricing each part."""
    sampled: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for unit, result in zip(list(u for u, _ in dry.units()), dry.run(), strict=True):
        sampled[(unit.group, unit.strategy)].append(result)
    wanted: dict[tuple[str, str], int] = defaultdict(int)
    for unit in todo:
        wanted[(unit.group, unit.strategy)] += 1
    lines = []
    for (group, strategy), units in wanted.items():
        results = sampled.get((group, strategy), [])
        total: Parts = defaultdict(Usage)
        for r in results:
            for part, usage in spend(r).items():
                total[part] += usage
        factor = units / len(results) if results else 0.0
        parts = {part: scale(usage, factor) for part, usage in total.items()}
        models = prices(strategy)
        costs = [cost_usd(models.get(part), usage) for part, usage in parts.items()]
        cost = None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)
        lines.append(Line(group, strategy, units, parts, cost))
    per_group = max((len(v) for v in sampled.values()), default=0)
    return Estimate(lines, per_group)


def interactive() -> bool:
    """Whether there is a person to ask: a terminal on standard input."""
    stream = sys.stdin
    return stream is not None and not stream.closed and stream.isatty()


def confirm(text: str, yes: bool, echo: Callable[[str], None]) -> None:
    """Show the estimate; go on with `yes`, else ask. Without a terminal to ask on, refuse
    rather than wait for an answer that never comes."""
    echo(text)
    if yes:
        return
    if not interactive():
        raise UsageError(
            "this run calls a real model and there is no terminal to ask whether to go on: "
            "pass --yes to start it"
        )
    if not click.confirm("Start the run?", default=False, err=True):
        raise UsageError("not started (pass --yes to start without asking)")


def remaining(runner: Harness[Any]) -> list[Unit]:
    """The units an interrupted run has still to do (all of them for a new run)."""
    done = runner.journal.load() if runner.journal is not None else {}
    return [u for u, _ in runner.units() if u.key not in done]


def sample_ids(runner: Harness[Any], groups: Sequence[str], n: int = SAMPLE_TASKS) -> list[str]:
    """The ids of the first `n` tasks of each group."""
    ids: dict[str, None] = {}
    for group in groups:
        for task in runner.tasks(group)[:n]:
            ids[str(task.id)] = None
    return list(ids)


ZIPACT = ("zipact", "summary", "zipact_bm25")  # their summaries are the agent's model's calls


def price_names(config: Any, strategy: str) -> dict[str, str | None]:
    """The models pricing a strategy's agent, memory LLM and embedding calls."""
    model = config.price_model or config.model or config.memory_model
    memory = config.price_model or config.memory_model or config.model
    embedding = config.embedding_model
    if config.price_model and embedding.startswith("flowstate-embed/"):
        embedding = "text-embedding-3-small"  # priced as the baseline it stands for
    return {
        "agent": model,
        "memory": model if strategy in ZIPACT else memory,
        "embedding": embedding,
    }


def ask(
    runner: Harness[Any],
    make_dry: Callable[[dict[str, Any]], Harness[Any]],
    yes: bool,
    extra_parts: Callable[[Any], Parts] = lambda result: {},
    extra_prices: dict[str, str | None] | None = None,
) -> None:
    """Estimate what the run's remaining units will spend (the scripted oracle on a sample,
    scaled and priced), show it, and ask whether to go on. `make_dry(update)` builds the
    offline runner from the run's config updated with `update`."""
    todo = remaining(runner)
    if not todo:
        return
    dry = make_dry(
        {
            "agent": "oracle",
            "model": None,
            "memory_model": None,
            "task_ids": sample_ids(runner, runner.groups()),
            "limit": None,
            "trials": 1,
            "keep_memory": False,
        }
    )
    c = runner.config

    def parts(result: Any) -> Parts:
        usage = {
            "agent": result.usage,
            "memory": result.memory_usage,
            "embedding": result.embedding_usage,
        }
        return {**usage, **extra_parts(result)}

    def prices(strategy: str) -> dict[str, str | None]:
        return {**price_names(c, strategy), **(extra_prices or {})}

    found = estimate(runner, dry, todo, parts, prices)
    model = c.price_model or c.model or c.memory_model or ""
    confirm(found.text(model), yes, lambda text: click.echo(text, err=True))
