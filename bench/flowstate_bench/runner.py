"""`flowstate bench`: plan the run, show progress, write report.json, report.md and plots."""

from __future__ import annotations

import importlib.util
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from flowstate.errors import UsageError
from flowstate.llm.client import json_instruction
from flowstate.models import StepOutput
from flowstate.store import Repository, Store
from flowstate.tokens import count_tokens
from flowstate_bench import (
    engine_suite,
    namespaces,
    plots,
    report,
    startup,
    targets,
    token_report,
    token_suite,
)
from flowstate_bench.engine_suite import Samples
from flowstate_bench.synthetic import DEFAULT_SHAPE, BundleShape

QUICK_SIZES = (1_000, 10_000)
FULL_SIZES = (1_000, 10_000, 100_000)
MILLION = 1_000_000
# A million states is 20,000 commits (about 25-50 minutes on 2 shared cores): with --million
# a build stops after this long, is kept, and the next run goes on from there.
MILLION_BUILD_MINUTES = 40.0
QUICK_SAMPLES = Samples(step_requests=8, commits=12, reveals=40, deltas=200, renders=40)
FULL_SAMPLES = Samples(step_requests=20, commits=30, reveals=100, deltas=500, renders=100)


@dataclass(frozen=True)
class Plan:
    """What one invocation measures."""

    sizes: tuple[int, ...]
    repeats: int
    samples: Samples
    depths: tuple[int, ...] = token_suite.DEPTHS
    keep: bool = False
    command: str = "flowstate bench"
    notes: tuple[str, ...] = field(default=())
    prefix: str = namespaces.PREFIX  # of the engine namespaces: bench_engine_10k
    shape: BundleShape = DEFAULT_SHAPE
    cli_runs: int = 3  # interleaved start-ups of `flowstate --help` and of `import click`
    build_minutes: float | None = None  # per namespace; a build still short is kept, unmeasured

    @classmethod
    def from_options(
        cls,
        quick: bool,
        million: bool,
        repeats: int | None,
        keep: bool,
        build_minutes: float | None = None,
        prefix: str = namespaces.PREFIX,
    ) -> Plan:
        sizes = QUICK_SIZES if quick else FULL_SIZES
        if million:
            sizes = (*sizes, MILLION)
        words = ["flowstate bench", "--quick" * quick, "--million" * million]
        if repeats is not None:
            words.append(f"--repeats {repeats}")
        if million and build_minutes is None:
            build_minutes = MILLION_BUILD_MINUTES
        if build_minutes is not None:
            words.append(f"--build-minutes {build_minutes:g}")
        notes = []
        if quick:
            notes.append(
                "--quick measures 1k and 10k states: building 100k through the real commit "
                "path alone takes longer than the 5 minutes --quick allows on 2 cores "
                "(run without --quick for 100k)."
            )
        return cls(
            sizes=sizes,
            repeats=repeats or (3 if quick else 5),
            samples=QUICK_SAMPLES if quick else FULL_SAMPLES,
            keep=keep,
            command=" ".join(w for w in words if w),
            notes=tuple(notes),
            cli_runs=9 if quick else 15,
            build_minutes=build_minutes,
            prefix=prefix,
        )


def require_extras() -> None:
    missing = [m for m in ("rank_bm25", "matplotlib") if importlib.util.find_spec(m) is None]
    if missing:
        raise UsageError(
            f"flowstate bench needs {', '.join(missing)}: "
            "pip install ./bench (flowstate-memory-bench)"
        )


def _engine(
    store: Store, plan: Plan, progress: Progress, say: Callable[[str], None]
) -> tuple[dict, dict]:
    """Figures per size, and the sizes whose build ran out of time (kept for the next run)."""
    out: dict[str, Any] = {}
    unfinished: dict[str, Any] = {}
    try:
        for states in sorted(plan.sizes):
            label = namespaces.size_label(states)
            build = progress.add_task(f"build {label}", total=None)
            runs = progress.add_task(f"measure {label}", total=plan.repeats)

            def built(done: int, total: int, task=build) -> None:
                progress.update(task, completed=done, total=total)

            def measured(done: int, task=runs) -> None:
                progress.update(task, completed=done)

            minutes = plan.build_minutes
            figures = engine_suite.measure_size(
                store,
                states,
                plan.repeats,
                plan.samples,
                plan.shape,
                say=say,
                build_progress=built,
                run_done=measured,
                prefix=plan.prefix,
                deadline=None if minutes is None else time.monotonic() + minutes * 60,
            )
            (unfinished if figures.get("unfinished") else out)[label] = figures
            progress.update(build, completed=1, total=1)
    finally:
        if not plan.keep:
            for states in plan.sizes:
                if namespaces.size_label(states) in unfinished:
                    continue  # kept: the next run goes on building it
                repo = Repository(store, namespaces.namespace_for(states, plan.prefix))
                namespaces.forget(repo, states)
    return out, unfinished


def _notes(plan: Plan, load: tuple[float, float, float]) -> list[str]:
    schema = count_tokens(json_instruction(StepOutput))
    end = os.getloadavg()
    return [
        *plan.notes,
        f"Load average {load[0]:.2f} when the run started and {end[0]:.2f} (5 min: {end[1]:.2f}) "
        f"when it ended, on {os.cpu_count()} cores that the database and the benchmark share; "
        "latencies grow with it.",
        "Prompt tokens are tiktoken counts (o200k_base) of the whole bill of each call: the "
        "messages and any reply schema or tool definitions sent beside them. FlowState's "
        "model writes keyword lines that its protocol describes, so no schema is sent; with "
        "the JSON reply format its StepOutput schema would add about "
        f"{schema} tokens to each call.",
        "Step overhead is the time between two model calls of one request (the model is a "
        "double that answers instantly), so it holds everything the engine does per step.",
    ]


def run(store: Store, plan: Plan, out: Path, console: Console | None = None) -> dict[str, Any]:
    """Run the suites of `plan` against `store` and write the report into `out`."""
    require_extras()
    out.mkdir(parents=True, exist_ok=True)
    console = console or Console(stderr=True)
    started, t0, load = datetime.now(UTC), time.perf_counter(), os.getloadavg()
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())  # fmt: skip
    with Progress(*columns, console=console, transient=False) as progress:
        say = progress.console.print
        task = progress.add_task("command-line start-up", total=1)
        cli = startup.measure(plan.cli_runs) if plan.cli_runs else {}
        progress.update(task, completed=1)
        engine, unfinished = _engine(store, plan, progress, say) if plan.sizes else ({}, {})
        task = progress.add_task("token suite", total=1)
        tokens = token_suite.run_suite(store, plan.depths, say=say) if plan.depths else {}
        progress.update(task, completed=1)
    result: dict[str, Any] = {
        "meta": {
            "command": plan.command,
            "started": started.isoformat(timespec="seconds"),
            "seconds": round(time.perf_counter() - t0, 1),
            "repeats": plan.repeats,
            "sizes": [namespaces.size_label(s) for s in plan.sizes],
            "depths": list(plan.depths),
            "request_shape": asdict(plan.shape),
            "machine": f"{platform.machine()} {os.cpu_count()} cores, Python "
            f"{sys.version.split()[0]}",
            "neo4j": store.uri,
            # Latencies follow the machine's load; the Rust extension speeds up Bolt packing.
            "load_average": {"start": list(load), "end": list(os.getloadavg())},
            "rust_extension": importlib.util.find_spec("neo4j_rust_ext") is not None,
        },
        "cli": cli,
        "engine": engine,
        "unfinished": unfinished,
        "scale": targets.scale(engine),
        "tokens": tokens,
        "notes": _notes(plan, load),
    }
    result["targets"] = targets.judge(result)
    result["plots"] = plots.write_all(result, out)
    report.write_json(result, out / "report.json")
    (out / "report.md").write_text(report.markdown(result), encoding="utf-8")
    return result


TOKEN_REPORT = "tokens.json"


def run_tokens(
    store: Store, depths: tuple[int, ...], out: Path, console: Console | None = None
) -> dict[str, Any]:
    """The token suite alone (deterministic: no latency, nothing machine-dependent in its
    figures): writes `tokens.json` (what `flowstate_bench.perf_doc` writes the tables of
    docs/performance.md from) and `tokens.md` into `out`."""
    require_extras()
    out.mkdir(parents=True, exist_ok=True)
    console = console or Console(stderr=True)
    t0 = time.perf_counter()
    tokens = token_suite.run_suite(store, depths, say=console.print)
    result: dict[str, Any] = {
        "meta": {
            "command": "flowstate bench tokens",
            "depths": list(depths),
            "seconds": round(time.perf_counter() - t0, 1),
        },
        "tokens": tokens,
    }
    result["targets"] = targets.token_targets(tokens)
    report.write_json(result, out / TOKEN_REPORT)
    lines = ["# FlowState token suite", "", *report.target_table(result["targets"])]
    text = "\n".join(lines + token_report.sections(tokens)) + "\n"
    (out / "tokens.md").write_text(text, encoding="utf-8")
    return result
