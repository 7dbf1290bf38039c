"""`flowstate demo`: eight requests of a group trip, memory carried across them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from flowstate.cli.common import emit, fails_cleanly
from flowstate.cli.connect import open_memory
from flowstate.errors import UsageError
from flowstate.models.wording import counted

if TYPE_CHECKING:
    from rich.console import Console

    from flowstate.api import FlowState
    from flowstate.demo.runner import DemoReport, RequestRow
    from flowstate.models.active import ActiveState

BROWSER_QUERY = (
    "MATCH (r:Request {{namespace: '{ns}'}})-[p:PRODUCED]->(n)\n"
    "OPTIONAL MATCH (n)-[rel]->(m {{namespace: '{ns}'}})\n"
    "RETURN r, p, n, rel, m"
)


@click.command()
@click.option(
    "--namespace",
    "-N",
    default="demo",
    show_default=True,
    help="Where the demo writes; when it holds requests, the next free '<name>-<n>' is used.",
)
@click.option("--reset", is_flag=True, help="Empty the namespace first instead.")
@click.option(
    "--model",
    "-m",
    default=None,
    help="Run both agents with a real litellm model instead of the scripted ones.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@fails_cleanly
def demo(namespace: str, reset: bool, model: str | None, as_json: bool) -> None:
    """Plan a group trip over eight requests with FlowState and with a plain tool-calling
    agent that keeps the whole history, and compare what each is billed.

    Runs offline with scripted models by default; starts the local Neo4j when none is set.

    \b
    Examples:
      flowstate demo
      flowstate demo --reset -N demo --json
      flowstate demo -m gpt-4o-mini        # needs OPENAI_API_KEY
    """
    try:
        from rich.console import Console
    except ImportError as e:
        raise UsageError(
            f"the demo needs the agent extra: pip install 'flowstate-memory[agent]' ({e})"
        ) from e

    from flowstate.api import FlowState
    from flowstate.demo.runner import run_demo, run_scripted_demo
    from flowstate.demo.scenario import REQUESTS
    from flowstate.llm.client import LiteLLMClient

    console = Console(stderr=True, quiet=as_json)
    with open_memory(namespace) as opened:
        fs = opened
        if reset and fs.history():
            fs.forget_all()
            console.print(f"Emptied namespace [bold]{namespace}[/].")
        elif fs.history():
            # The figures compare the same thing at every run: a fresh namespace's.
            fs = FlowState(opened.store, _fresh_namespace(opened))
            console.print(
                f"Namespace {namespace} already holds requests; this run uses the empty "
                f"namespace [bold]{fs.namespace}[/] (--reset empties {namespace} instead)."
            )
        with console.status("starting") as status:
            current = {"n": 0}

            def on_request(n: int, text: str) -> None:
                current["n"] = n
                status.update(f"request {n}/{len(REQUESTS)}: {text[:60]}")

            def on_step(active: ActiveState) -> None:
                last = active.log[-1].action if active.log else "thinking"
                status.update(
                    f"request {current['n']}/{len(REQUESTS)}, step {active.step}: {last[:70]}"
                )

            def on_done(row: RequestRow) -> None:
                console.print(_progress_line(row))

            if model:  # both agents on the real model
                report = run_demo(
                    fs, LiteLLMClient(model), model, on_request, on_done, on_step=on_step
                )
            else:
                report = run_scripted_demo(
                    fs, on_request=on_request, on_done=on_done, on_step=on_step
                )
    if model and not as_json:  # a real model: did it follow the protocol at each call?
        for row in report.rows:
            for n, said in enumerate(row.protocol, start=1):
                mark = "followed the protocol" if said == "ok" else f"did not: {said}"
                console.print(f"{row.request_id} call {n}: {mark}", markup=False)
    if as_json:
        emit(
            report.as_dict() | {"browser_query": BROWSER_QUERY.format(ns=report.namespace)},
            True,
            "",
        )
        return
    _print_report(Console(width=max(Console().width, 100)), report)


NAMESPACE_CHARS = 128  # the longest namespace name (flowstate.models.ids)


def _fresh_namespace(fs: FlowState) -> str:
    """The first '<namespace>-<n>' that no namespace has; a long name is cut to leave room
    for its '-<n>', so that the name stays valid."""
    taken = {n.namespace for n in fs.namespaces()}
    n = 2
    while _numbered(fs.namespace, n) in taken:
        n += 1
    return _numbered(fs.namespace, n)


def _numbered(namespace: str, n: int) -> str:
    suffix = f"-{n}"
    return namespace[: NAMESPACE_CHARS - len(suffix)] + suffix


def _progress_line(row: RequestRow) -> str:
    return (
        f"[green]{row.request_id}[/] {counted(row.flowstate.calls, 'call')} "
        f"({counted(row.waits, 'wait')}), +{counted(row.states_added, 'state')}, "
        f"{row.revealed} revealed -> {row.answer[:90]}"
    )


def _print_report(console: Console, report: DemoReport) -> None:
    from rich.table import Table

    from flowstate.settings import LocalServerSettings

    table = Table(title=f"FlowState demo - namespace {report.namespace} - model {report.model}")
    columns = ("request", "calls", "plain calls", "+states", "revealed", "FlowState tokens",
               "plain agent tokens", "FlowState / plain")  # fmt: skip
    for name in columns:
        table.add_column(name, justify="left" if name == "request" else "right")
    for r in report.rows:
        table.add_row(
            r.request_id,
            str(r.flowstate.calls),
            str(r.plain.calls),
            str(r.states_added),
            str(r.revealed),
            f"{r.flowstate.tokens:,}",
            f"{r.plain.tokens:,}",
            f"{r.ratio:.2f}x",
        )
    fs_bill, plain = report.flowstate, report.plain
    table.add_row(
        "total",
        str(fs_bill.calls),
        str(plain.calls),
        str(sum(r.states_added for r in report.rows)),
        str(sum(r.revealed for r in report.rows)),
        f"{fs_bill.tokens:,}",
        f"{plain.tokens:,}",
        f"{report.ratio:.2f}x",
        style="bold",
    )
    console.print(table)
    console.print(
        f"\nTokens are prompt plus completion, as sent to and written by the model. FlowState: "
        f"{fs_bill.prompt_tokens:,} in, {fs_bill.completion_tokens:,} out; the plain agent: "
        f"{plain.prompt_tokens:,} in, {plain.completion_tokens:,} out."
    )
    dearer = [r.request_id for r in report.rows if r.ratio > 1]
    if dearer:
        console.print(
            f"FlowState costs more than the plain agent on {', '.join(dearer)}: memory has "
            "little to save before the history grows, and writing it costs output tokens."
        )
    totals = report.as_dict()["totals"]
    console.print(
        "With a provider's prompt cache (a repeated prefix of at least 1,024 tokens, in "
        "128-token steps) FlowState is billed "
        f"{totals['ratio_cached_at_10%']:.2f}x the plain agent's tokens with cached input at "
        f"10% of the price, {totals['ratio_cached_at_50%']:.2f}x at 50%: the plain agent's "
        "growing history is one long prefix a cache serves."
    )
    for model, cost in totals["cost_usd"].items():
        if cost["flowstate"] is not None and cost["plain"] is not None:
            console.print(
                f"At {model}'s list prices (no cache): FlowState ${cost['flowstate']:.4f}, "
                f"the plain agent ${cost['plain']:.4f}."
            )
    verdict = "less" if report.ratio < 1 else "more"
    console.print(
        f"Over the demo FlowState is billed {report.ratio:.2f}x the plain agent's tokens "
        f"({verdict} than the agent that keeps the whole history)."
    )
    parts = report.parts
    pre = report.prefetch
    console.print(
        "FlowState's prompt tokens by part: "
        + ", ".join(f"{p.replace('_', ' ')} {n:,}" for p, n in parts.items() if n)
        + f". Calls that only waited for memory: {sum(r.waits for r in report.rows)}. "
        f"Prefetch opened {pre['prefetched']} states before first calls "
        f"(precision {pre['precision']:.0%}, recall {pre['recall']:.0%} against what the "
        "planner read)."
    )
    console.print(f"\nLast answer: {report.rows[-1].answer}\n")
    console.print(
        "Both agents' calls went through litellm and are counted with the same tokenizer, "
        "tool definitions included.\nSee this run's memory in Neo4j Browser at "
        f"{LocalServerSettings().http_url}/browser/ (when using the local server) with:\n"
    )
    console.print(
        BROWSER_QUERY.format(ns=report.namespace), markup=False, highlight=False, soft_wrap=True
    )
