"""`flowstate bench faults`: is FlowState safe to deploy? Faults and load at scale.

Fuzzed model replies (fast path and whole requests on Neo4j), many concurrent agents on one
Store, several writers on one namespace at once (a hold per request), many writers through
every shell on one namespace while writer processes are SIGKILLed and Neo4j restarts (on the
spare server; on the shared one without the restart), the engine's edges
(hostile tool outputs, replies nested past the recursion limit, past states forgotten before a
commit, a process killed at its final commit), Neo4j SIGKILLed during commits and stopped in
the middle of a request. Every part reports what it tried and what it found; losses, crossed
and duplicated states must be 0.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from flowstate.cli.plugins import fails_cleanly


def totals(report: dict) -> dict:
    """The headline counts across parts."""
    from flowstate_bench.fault_outage import EXPECTED_STATES

    fast, full, crowd, spare = report["fuzz"], report["fuzz_full"], report["crowd"], report["spare"]
    writers, many = report["writers"], report.get("many_writers") or {}
    kills = spare["kills"]
    outages = [o for o in (spare.get("outage"), spare.get("outage_at_commit")) if o]
    edges = list(report.get("edges", {}).values())
    parts = [crowd, writers, many, *kills, *outages, *edges]
    others = [p for part in parts for p in part.get("problems", [])]
    unlisted = crowd["problem_count"] - len(crowd["problems"])  # the crowd quotes 20 at most
    outage_losses = sum(
        len(set(EXPECTED_STATES) - set(o["committed_states"])) + (o["answer"] != "done")
        for o in outages
    )  # states, and final answers, that did not survive
    return {
        "cases_tried": fast["cases"] + full["cases"],
        "faults_injected": len(kills) + len(outages),  # SIGKILLs, stops mid-request
        "commits_acknowledged_before_kills": sum(k["acked"] for k in kills),
        "commits_cut_by_kills": sum(k["cut"] for k in kills),
        "cut_commits_that_landed_whole": sum(k["cut_landed"] for k in kills),
        "states_checked": (
            fast.get("states_committed", 0)
            + full.get("states_committed", 0)
            + crowd["states_checked"]
            + writers["states_checked"]
            + many.get("states_checked", 0)
            + sum(k["states_checked"] for k in kills)
            + sum(len(o["committed_states"]) for o in outages)
        ),
        "losses_found": sum(k["lost"] + k["incomplete"] for k in kills)
        + crowd["missing"]
        + writers["missing"]
        + many.get("lost", 0)
        + outage_losses,
        "crossed_states": crowd["crossed"] + writers["crossed"],
        "writer_requests_committed": writers["committed"],
        "writer_requests_failed": writers["failed"],
        "writer_requests_open_at_once": writers["most_open_at_once"],
        "writer_requests_left_open": writers["open_left"],
        "writer_ids_repeated_or_skipped": writers["repeated_ids"] + writers["gaps"],
        **_many_totals(many),
        "duplicated_states": crowd["duplicated"] + many.get("duplicated", 0),
        "rejections_explained": fast.get("rejections_told", 0) + full.get("rejections_told", 0),
        **_edge_totals(report.get("edges")),
        "failures": fast["failures"] + full["failures"] + len(others) + unlisted,
        "problems": (others + fast["failure_examples"] + full["failure_examples"])[:40],
    }


def _many_totals(many: dict) -> dict:
    if not many:
        return {}
    return {
        "many_writers_x_requests": many["writers"] * many["requests"],
        "many_writer_requests_committed": many["committed"],
        "many_writer_requests_lost": many["lost"],
        "many_writer_requests_duplicated": many["duplicated"],
        "many_writer_namespace_busy": many["namespace_busy"],
        "many_writer_failed": many["failed"],
        "many_writer_kills": many["writer_kills"],
        "many_writer_neo4j_restarts": many["neo4j_restarts"],
        "many_writer_ids_discarded": many["gaps_discarded"],
        "many_writer_ids_unexplained": len(many["unexplained_gaps"]),
        "many_writer_supersessions_revised": many["revisions"],
        "many_writer_guard_decisions": many["guard_approved"]
        + many["guard_denied_stale"]
        + many["guard_denied_other"],
        "many_writer_guard_denied_stale": many["guard_denied_stale"],
        "many_writer_guard_inconsistent": many["guard_inconsistent"],
        "many_writer_most_open_at_once": many["most_open_at_once"],
        "many_writer_index_equals_rebuild": int(many["index_matches_rebuild"]),
        "many_writer_own_indexes_equal_rebuild": many["writer_indexes_matching"],
        "many_writer_own_indexes_differing": many["writer_indexes_differing"],
    }


def _edge_totals(edges: dict | None) -> dict:
    if not edges:
        return {}
    tools, replies = edges["hostile_tools"], edges["deep_replies"]
    dangling, crash = edges["dangling_at_commit"], edges["crash_at_final_commit"]
    return {
        "hostile_tool_outputs": tools["tool_outputs"],
        "hostile_outputs_bounded": tools["bounded_observations"],
        "false_interruptions_on_resume": tools["false_interruptions"],
        "hostile_replies_refused": replies["refused_with_reason"],
        "hostile_replies_that_escaped": replies["escaped"],
        "dangling_commits": dangling["committed"],
        "dangling_references_dropped": dangling["references_dropped"],
        "requests_stuck_on_dangling": dangling["stuck"],
        "crashes_at_final_commit": crash["rounds"],
        "model_calls_repeated_after_crash": crash["model_calls_repeated"],
    }


@click.command()
@click.option(
    "--cases",
    type=click.IntRange(1),
    default=10_000,
    show_default=True,
    help="Fuzzed requests through the pure step logic.",
)
@click.option(
    "--full-cases",
    type=click.IntRange(0),
    default=200,
    show_default=True,
    help="Fuzzed requests run whole by an agent on Neo4j.",
)
@click.option(
    "--agents",
    type=click.IntRange(1, 200),
    default=50,
    show_default=True,
    help="Concurrent agents, one namespace and one thread each.",
)
@click.option(
    "--requests",
    type=click.IntRange(1),
    default=20,
    show_default=True,
    help="Requests per concurrent agent.",
)
@click.option(
    "--kills",
    type=click.IntRange(0),
    default=3,
    show_default=True,
    help="Rounds of SIGKILL during commits on a spare server.",
)
@click.option(
    "--writers",
    type=click.IntRange(1, 50),
    default=4,
    show_default=True,
    help="Concurrent writers on ONE namespace, each with its own connection.",
)
@click.option(
    "--writer-requests",
    type=click.IntRange(1),
    default=10,
    show_default=True,
    help="Requests per concurrent writer.",
)
@click.option(
    "--many-writers",
    type=click.IntRange(0, 40),
    default=8,
    show_default=True,
    help="Writers through every shell on ONE namespace, half in processes of their own (0: skip).",
)
@click.option(
    "--many-requests",
    type=click.IntRange(1),
    default=25,
    show_default=True,
    help="Requests per writer of the many-writer run.",
)
@click.option(
    "--writer-kills",
    type=click.IntRange(0),
    default=2,
    show_default=True,
    help="Writer processes of the many-writer run SIGKILLed mid-request.",
)
@click.option(
    "--edge-rounds",
    type=click.IntRange(0),
    default=1,
    show_default=True,
    help="Rounds of the edge cases: hostile tools, dangling references, crash at commit.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Fuzzing seed.")
@click.option(
    "--spare/--no-spare",
    default=True,
    show_default=True,
    help="Run the kill and outage parts (they start a spare Neo4j, ~1 minute).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("bench-out"),
    show_default=True,
    help="Folder for faults.json.",
)
@fails_cleanly
def faults(cases: int, full_cases: int, agents: int, requests: int, kills: int, writers: int,
           writer_requests: int, many_writers: int, many_requests: int, writer_kills: int,
           edge_rounds: int, seed: int, spare: bool, out: Path) -> None:  # fmt: skip
    """Inject faults and load: fuzzed model output, concurrent agents, writers competing for
    one namespace, many writers through every shell on one namespace while writer processes
    are SIGKILLed and Neo4j restarts, hostile tools and replies, states forgotten before a
    commit, a process killed at its final commit, Neo4j killed during commits and stopped
    mid-request. Writes
    --out/faults.json; exits 1 when anything was lost, crossed or left unexplained.

    \b
    Example:
      flowstate bench faults --cases 10000 --agents 50 --requests 20 --kills 3 --out bench-out
    """
    from flowstate.local.embedded import resolve_database
    from flowstate.settings import LocalServerSettings, Neo4jSettings
    from flowstate.store import Store
    from flowstate_bench import fault_runs

    began = time.monotonic()
    report: dict = {"options": {"cases": cases, "full_cases": full_cases, "agents": agents,
                                "requests": requests, "kills": kills, "writers": writers,
                                "writer_requests": writer_requests,
                                "many_writers": many_writers, "many_requests": many_requests,
                                "writer_kills": writer_kills, "edge_rounds": edge_rounds,
                                "seed": seed}}  # fmt: skip
    click.echo(f"Fuzzing {cases:,} requests through the step logic...")
    report["fuzz"] = fault_runs.fuzz(cases, seed, say=click.echo)
    settings = resolve_database(Neo4jSettings(), LocalServerSettings(), click.echo)
    with Store.connect(settings) as store:
        click.echo(f"Fuzzing {full_cases:,} whole requests on {settings.uri}...")
        report["fuzz_full"] = fault_runs.fuzz(full_cases, seed, store, click.echo)
        click.echo(f"{agents} concurrent agents x {requests} requests...")
        report["crowd"] = fault_runs.crowd(store, agents, requests)
        if edge_rounds:
            from flowstate_bench.fault_edges import edges

            click.echo(f"Edge cases x {edge_rounds}: hostile tools and replies, dangling "
                       "references, a crash at the final commit...")  # fmt: skip
            report["edges"] = edges(store, settings, edge_rounds)
    click.echo(f"{writers} writers x {writer_requests} requests on one namespace...")
    report["writers"] = fault_runs.writers(settings, writers, writer_requests)
    many = fault_runs.ManyShape(many_writers, many_requests, writer_kills) if many_writers else None
    if spare:
        click.echo(f"{kills} SIGKILL rounds and two outages on a spare Neo4j...")
        report["spare"] = fault_runs.spare_faults(kills, click.echo, many=many)
        report["many_writers"] = report["spare"].pop("many_writers", None)
    else:
        report["spare"] = {"kills": []}
        report["many_writers"] = many and fault_runs.many_writers_run(settings, many, click.echo)

    report["totals"] = totals(report)
    report["seconds"] = round(time.monotonic() - began, 1)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "faults.json"
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False, default=str))
    for key, value in report["totals"].items():
        if key != "problems":
            click.echo(f"{key:>34}: {value:,}")
    click.echo(f"Report: {path} ({report['seconds']:.0f}s)")
    if report["totals"]["failures"] or report["totals"]["losses_found"]:
        for problem in report["totals"]["problems"][:10]:
            click.echo(f"PROBLEM: {problem}", err=True)
        sys.exit(1)
