"""`flowstate bench`: the default suites (engine + tokens), `tau` for tau-bench and `arena`
for MemoryArena."""

from __future__ import annotations

from pathlib import Path

import click

from flowstate.cli.plugins import fails_cleanly
from flowstate_bench.arena.cli import arena
from flowstate_bench.faults import faults
from flowstate_bench.tau.cli import tau


@click.group(invoke_without_command=True)
@click.option("--quick", is_flag=True, help="Smaller sizes and fewer repeats (about 5 minutes).")
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("bench-out"),
    show_default=True,
    help="Folder for the JSON report, Markdown table and plots.",
)
@click.option("--million", is_flag=True, help="Also measure a namespace of 1,000,000 states.")
@click.option(
    "--repeats",
    type=click.IntRange(1, 50),
    default=None,
    help="Runs per engine measurement; figures are medians across them [3 quick, 5 full].",
)
@click.option("--keep", is_flag=True, help="Keep the bench_engine_* namespaces for a later run.")
@click.option(
    "--build-minutes",
    type=click.FloatRange(min=0),
    default=None,
    help="Stop building a namespace after this long, keep it for the next run, and report "
    "what it reached [40 with --million, else no limit].",
)
@click.option(
    "--prefix",
    default="bench_engine",
    show_default=True,
    help="Name prefix of the engine namespaces (bench_engine_10k), so that two runs on one "
    "database keep apart.",
)
@click.pass_context
@fails_cleanly
def bench(
    ctx: click.Context,
    quick: bool,
    out: Path,
    million: bool,
    repeats: int | None,
    keep: bool,
    build_minutes: float | None,
    prefix: str,
) -> None:
    """Measure engine speed at scale and token economy against full context, BM25 and
    rolling summaries; write report.json, report.md and PNG plots into --out.

    \b
    Example:
      flowstate bench --quick --out bench-out
    """
    if ctx.invoked_subcommand is not None:
        return
    from flowstate.local.embedded import resolve_database
    from flowstate.settings import LocalServerSettings, Neo4jSettings
    from flowstate.store import Store
    from flowstate_bench.runner import Plan, run

    plan = Plan.from_options(quick, million, repeats, keep, build_minutes, prefix)
    settings = resolve_database(Neo4jSettings(), LocalServerSettings(), _say)
    with Store.connect(settings) as store:
        result = run(store, plan, out)
    for label, size in result["unfinished"].items():
        click.echo(
            f"{label}: {size['states']:,} of {size['target_states']:,} states; {size['reason']}"
        )
    for t in result["targets"]:
        click.echo(f"{t['status']:>12}  {t['goal']}: {t['figure']}")
    click.echo(f"Report: {out / 'report.md'} (JSON: {out / 'report.json'})")


bench.add_command(tau)
bench.add_command(arena)
bench.add_command(faults)

RESULTS = Path("bench/results")
PERFORMANCE_DOC = Path("docs/performance.md")


@bench.command(name="tokens")
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=RESULTS,
    show_default=True,
    help="Folder for tokens.json and tokens.md.",
)
@click.option(
    "--doc",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    default=None,
    help="Also rewrite the token tables of this page (docs/performance.md) from the report.",
)
@fails_cleanly
def tokens_bench(out: Path, doc: Path | None) -> None:
    """Run the token suite alone (depths 10, 25, 50 and 100; deterministic) and write its
    report; with --doc, regenerate the token tables of docs/performance.md from it.

    \b
    Example (from the repository's root: the committed report and the page it feeds):
      flowstate bench tokens --out bench/results --doc docs/performance.md
    """
    from flowstate.local.embedded import resolve_database
    from flowstate.settings import LocalServerSettings, Neo4jSettings
    from flowstate.store import Store
    from flowstate_bench import perf_doc, token_suite
    from flowstate_bench.runner import TOKEN_REPORT, run_tokens

    settings = resolve_database(Neo4jSettings(), LocalServerSettings(), _say)
    with Store.connect(settings) as store:
        result = run_tokens(store, token_suite.DEPTHS, out)
    for t in result["targets"]:
        click.echo(f"{t['status']:>12}  {t['goal']}: {t['figure']}")
    click.echo(f"Report: {out / TOKEN_REPORT}")
    if doc is not None:
        perf_doc.write(out / TOKEN_REPORT, doc)
        click.echo(f"Tables rewritten: {doc}")


@bench.command(name="mcp")
@click.option("--rounds", type=click.IntRange(3, 10_000), default=20, show_default=True)
@click.option(
    "--neo4j-memory",
    "neo4j_memory",
    default=None,
    help="Command of Neo4j Labs' mcp-neo4j-memory server, measured side by side.",
)
@click.option(
    "--unconfigured",
    is_flag=True,
    help="Also time a cold start with no Neo4j configured (starts a spare managed server).",
)
@click.option(
    "--sizes",
    is_flag=True,
    help="Instead of timings: each tool's result size in tokens, text and structured, over "
    "a scripted 12-call session.",
)
@click.option("--warm", type=click.IntRange(0, 100), default=2, show_default=True,
              help="Rounds left out of the figures, first.")  # fmt: skip
@click.option("--search-states", type=click.IntRange(0, 1_000_000), default=10_000,
              show_default=True, help="States of the namespace memory_search is timed on "
              "(built once, reused; 0: not timed).")  # fmt: skip
@click.option("--baseline", default=None,
              help="Another build's flowstate command, in the same rounds.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@fails_cleanly
def mcp_bench(
    rounds: int,
    neo4j_memory: str | None,
    unconfigured: bool,
    sizes: bool,
    warm: int,
    search_states: int,
    baseline: str | None,
    as_json: bool,
) -> None:
    """Time `flowstate mcp` as a host sees it, over stdio: one fact written and read back,
    interleaved round by round with mcp-neo4j-memory's on the same Neo4j; the first call of
    each tool on a server just spawned (with and without its warm-up) against its later
    ones; memory_search on a large namespace; the cold start. With p50, p95, the load and
    whether the [rust] extra is installed. With --sizes, what a host's model reads of each
    tool's result instead.

    \b
    Example:
      flowstate bench mcp --rounds 20 --neo4j-memory /tmp/venv/bin/mcp-neo4j-memory
      flowstate bench mcp --sizes
    """
    import json

    from flowstate.local.embedded import resolve_database
    from flowstate.settings import LocalServerSettings, Neo4jSettings
    from flowstate_bench.mcp_bench import run_mcp_bench

    settings = resolve_database(Neo4jSettings(), LocalServerSettings(), _say)
    if sizes:
        from flowstate_bench import mcp_sizes

        figures = mcp_sizes.report(mcp_sizes.measure(settings))
        click.echo(json.dumps(figures, indent=2) if as_json else mcp_sizes.table(figures))
        return
    report = run_mcp_bench(
        settings.uri, rounds, neo4j_memory, unconfigured, warm, search_states, baseline
    )
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    for section, figures in report.items():
        click.echo(f"{section}: {json.dumps(figures)}")


def _say(message: str) -> None:
    """Which Neo4j is used, on stderr: stdout carries the figures (`--json`)."""
    click.echo(message, err=True)


@bench.command(name="upkeep")
@click.option(
    "--requests",
    type=click.IntRange(1, 8),
    default=8,
    show_default=True,
    help="How many of the demo's requests to write.",
)
@click.option(
    "--system",
    "systems",
    type=click.Choice(["mem0", "graphiti"]),
    multiple=True,
    help="Measure only these memory systems [both].",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("bench-out"),
    show_default=True,
    help="Folder for upkeep.json.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@fails_cleanly
def upkeep(requests: int, systems: tuple[str, ...], out: Path, as_json: bool) -> None:
    """What keeping memory costs per request: FlowState's memory lines and the protocol's
    writing part, beside the real write paths of Mem0 and Graphiti, their model calls answered
    by a script that extracts the same facts (needs the bench's `upkeep` extra).

    \b
    Example:
      pip install 'flowstate-memory-bench[upkeep]'
      flowstate bench upkeep --out bench-out
    """
    import json

    from flowstate.errors import UsageError
    from flowstate.local.embedded import resolve_database
    from flowstate.settings import LocalServerSettings, Neo4jSettings
    from flowstate.store import Store
    from flowstate_bench.upkeep.run import missing_systems, run_upkeep, table, write_report

    chosen = systems or ("mem0", "graphiti")
    if missing := missing_systems(chosen):
        raise UsageError(
            f"not installed: {', '.join(missing)}; pip install 'flowstate-memory-bench[upkeep]'"
        )
    settings = resolve_database(Neo4jSettings(), LocalServerSettings(), _say)
    with Store.connect(settings) as store:
        report = run_upkeep(store, settings, requests, chosen)
    path = write_report(report, out)
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2, ensure_ascii=False))
        return
    click.echo("Tokens per write, prompt plus completion (embeddings apart):")
    for line in table(report):
        click.echo(line)
    click.echo(f"JSON: {path}")
