"""`flowstate demo`: eight requests of a group trip, memory carried across them."""

from __future__ import annotations

from contextlib import nullcontext
from typing import TYPE_CHECKING

import click

from flowstate.cli.common import emit, fails_cleanly
from flowstate.cli.connect import open_memory
from flowstate.errors import UsageError
from flowstate.models.wording import counted

if TYPE_CHECKING:
    from rich.console import Console

    from flowstate.demo.runner import DemoReport, RequestRow
    from flowstate.models.active import ActiveState

BROWSER_QUERY = (
    "MATCH (r:Request {{namespace: '{ns}'}})-[p:PRODUCED]->(n)\n"
    "OPTIONAL MATCH (n)-[rel]->(m {{namespace: '{ns}'}})\n"
    "RETURN r, p, n, rel, m"
)


@click.command()
@click.option("--namespace", "-N", default="demo", show_default=True, help="Where the demo writes.")
@click.option("--reset", is_flag=True, help="Empty the namespace first.")
@click.option(
    "--model",
    "-m",
    default=None,
    help="Run the same scenario with a real litellm model instead of the scripted one.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@fails_cleanly
def demo(namespace: str, reset: bool, model: str | None, as_json: bool) -> None:
    """Plan a group trip over eight requests, then compare tokens with the full-history way.

    Runs offline with a scripted model by default; starts the local Neo4j when none is set.

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

    from flowstate.demo.runner import run_demo
    from flowstate.demo.scenario import REQUESTS, scripted_policy
    from flowstate.llm.client import LiteLLMClient
    from flowstate.llm.scripted import ScriptedModel

    console = Console(stderr=True, quiet=as_json)
    # The scripted planner is served only while this command runs: its name is then free again.
    scripted: ScriptedModel | None = None
    if model:
        client = LiteLLMClient(model)
    else:
        scripted = ScriptedModel.policy("flowstate-demo", scripted_policy)
        client = scripted.client()
    with scripted or nullcontext(), open_memory(namespace) as fs:
        if reset and fs.history():
            fs.forget_all()
            console.print(f"Emptied namespace [bold]{namespace}[/].")
        before = len(fs.history())
        if before:
            console.print(
                f"Namespace {namespace} already holds {counted(before, 'request')}; the demo "
                "continues after them (--reset starts clean)."
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

            report = run_demo(
                fs,
                client,
                on_request=on_request,
                on_step=on_step,
                on_done=lambda row: console.print(_progress_line(row)),
            )
    if as_json:
        emit(report.as_dict() | {"browser_query": BROWSER_QUERY.format(ns=namespace)}, True, "")
        return
    _print_report(Console(width=max(Console().width, 100)), report)


def _progress_line(row: RequestRow) -> str:
    return (
        f"[green]{row.request_id}[/] {counted(row.steps, 'step')}, "
        f"+{counted(row.states_added, 'state')}, "
        f"{row.revealed} revealed -> {row.answer[:90]}"
    )


def _print_report(console: Console, report: DemoReport) -> None:
    from rich.table import Table

    from flowstate.settings import LocalServerSettings

    table = Table(title=f"FlowState demo - namespace {report.namespace} - model {report.model}")
    for name in (
        "request",
        "steps",
        "+states",
        "revealed",
        "prompt tokens",
        "full-history",
        "saving",
    ):
        table.add_column(name, justify="left" if name == "request" else "right")
    for r in report.rows:
        saving = 1 - r.prompt_tokens / r.full_history_tokens if r.full_history_tokens else 0
        table.add_row(
            r.request_id,
            str(r.steps),
            str(r.states_added),
            str(r.revealed),
            f"{r.prompt_tokens:,}",
            f"{r.full_history_tokens:,}",
            f"{saving:.0%}",
        )
    table.add_row(
        "total",
        str(sum(r.steps for r in report.rows)),
        str(sum(r.states_added for r in report.rows)),
        str(sum(r.revealed for r in report.rows)),
        f"{report.prompt_tokens:,}",
        f"{report.full_history_tokens:,}",
        f"{report.saving:.0%}",
        style="bold",
    )
    console.print(table)
    parts = report.parts
    console.print(
        "\nFlowState's prompt tokens by part: "
        + ", ".join(f"{p.replace('_', ' ')} {n:,}" for p, n in parts.items() if n)
        + f". A call repeats {report.prefix_share:.0%} of the previous call's prompt "
        "byte for byte (what provider prompt caching reuses)."
    )
    lean = report.as_dict()["totals"]["lean_full_history_tokens"]
    console.print(
        f"Against a replay agent that never waits for memory and replays only its actions "
        f"({lean:,} tokens), the saving is {report.lean_saving:.0%}."
    )
    console.print(f"\nLast answer: {report.rows[-1].answer}\n")
    console.print(
        "Tokens are counted with the same tokenizer on the real message lists of the "
        "same steps.\nSee this run's memory in Neo4j Browser at "
        f"{LocalServerSettings().http_url}/browser/ (when using the local server) with:\n"
    )
    console.print(
        BROWSER_QUERY.format(ns=report.namespace), markup=False, highlight=False, soft_wrap=True
    )
