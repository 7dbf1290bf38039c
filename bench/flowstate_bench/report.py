"""The report: one JSON document for machines, one Markdown page for people."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flowstate_bench import token_report
from flowstate_bench.token_report import table as _table

ENGINE_ROWS = (
    ("step_ms", "step critical path (rules + reveal + prompt; the draft saved meanwhile)"),
    ("step_plain_ms", "  a step that reveals nothing"),
    ("step_reveal_ms", "  a step that reveals 8 states"),
    ("bolt_rtt_ms", "bare RETURN 1 round trip"),
    ("write_tx_ms", "bare single-node write transaction"),
    ("commit_ms", "commit (50 states, 150 relations, 20 observations)"),
    ("index_update_ms", "index update after a commit"),
    ("index_render_ms", "index render per step (cached between commits)"),
    ("index_fetch_render_ms", "index load + render (agent start)"),
    ("reveal_ms", "reveal of 8 states"),
    ("delta_apply_ms", "delta of 10 ops: check + apply (pure)"),
    ("request_start_ms", "request start (index refresh, seq, draft)"),
    ("request_finish_ms", "request finish (final step, commit, index)"),
)


def write_json(report: dict[str, Any], path: Path) -> None:
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def engine_table(engine: dict[str, Any]) -> list[str]:
    sizes = list(engine)
    header = ["ms (p50 / p95 / p99)", *[f"{s} states" for s in sizes]]
    rows = []
    for key, label in ENGINE_ROWS:
        cells = []
        for s in sizes:
            v = engine[s].get(key)
            cells.append(f"{v['p50']:.2f} / {v['p95']:.2f} / {v['p99']:.2f}" if v else "-")
        rows.append([label, *cells])
    rows.append(["index tokens (budget)", *[_index(engine[s]["index"]) for s in sizes]])
    rows.append(["peak RSS of the process (MB)", *[str(engine[s]["peak_rss_mb"]) for s in sizes]])
    rows.append(["namespace build", *[_build(engine[s]["build"]) for s in sizes]])
    return _table(header, rows)


def _index(index: dict[str, Any]) -> str:
    return f"{index['tokens']} ({index['budget']}); {index['collapsed_requests']} collapsed"


def _build(build: dict[str, Any]) -> str:
    if "requests_per_s" in build:  # stopped by --build-minutes
        return f"{build['seconds']} s, out of time ({build['requests_per_s']} requests/s)"
    if build["reused"]:
        return "reused"
    return f"{build['seconds']} s, commit p50 {build['commit_ms']['p50']:.0f} ms"


def cli_table(cli: dict[str, Any]) -> list[str]:
    """Start-up of each command (median ms) and its multiple of `import click`."""
    click = cli["median_ms"]["python -c 'import click'"]
    rows = [[f"`{c}`", f"{ms:g}", f"{ms / click:.2f}x"] for c, ms in cli["median_ms"].items()]
    lines = _table(["command", "median ms", "vs import click"], rows)
    extra = ", ".join(f"{k} {v:g} ms" for k, v in cli["beyond_click_ms"].items())
    return [
        f"Fresh processes, {cli['runs']} interleaved runs of each; load average "
        f"{cli['load_average'][0]:g} at the start, {cli['load_average'][1]:g} at the end. "
        f"Goal: `flowstate --help` within {cli['goal_ratio']:g}x of `import click`.",
        "",
        *lines,
        "",
        "What `flowstate --help` imports beyond click (self time by top-level import, one "
        f"`-X importtime` run): {extra}.",
    ]


def scale_table(scale: dict[str, Any]) -> list[str]:
    ref, size = scale["reference"], scale["size"]
    rows = [
        [
            name.replace("_", " "),
            f"{f[f'{ref}_ms']:g}",
            f"{f[f'{size}_ms']:g}",
            f"{f['ratio']:.2f}x",
        ]
        for name, f in scale.items()
        if isinstance(f, dict)
    ]
    return _table(
        ["p50 ms", f"{ref} states", f"{size} states", f"ratio (goal <= {scale['goal_ratio']:g}x)"],
        rows,
    )


def target_table(targets: list[dict[str, Any]]) -> list[str]:
    mark = {"met": "met", "missed": "**missed**", "not measured": "not measured"}
    rows = [[t["goal"], mark[t["status"]], t["figure"]] for t in targets]
    return _table(["target", "status", "figure"], rows)


def _conditions(meta: dict[str, Any]) -> str:
    """The load average at the start and end, and whether the driver's Rust extension ran."""
    parts = []
    load = meta.get("load_average")
    if load:
        parts.append(
            f" Load average {load['start'][0]:.2f} at the start, {load['end'][0]:.2f} at the end."
        )
    if "rust_extension" in meta:
        parts.append(f" The [rust] extra: {'on' if meta['rust_extension'] else 'off'}.")
    return "".join(parts)


def markdown(report: dict[str, Any]) -> str:
    meta = report["meta"]
    out = [
        "# FlowState benchmark",
        "",
        f"`{meta['command']}` on {meta['machine']}, Neo4j {meta['neo4j']}, "
        f"{meta['started']}, {meta['seconds']:.0f} s in all. Latency figures are the median "
        f"across {meta['repeats']} runs of each run's percentiles.{_conditions(meta)}",
        "",
        "## Targets",
        "",
        *target_table(report["targets"]),
    ]
    if report.get("engine"):
        out += ["", "## Engine (real Neo4j, no model)", "", *engine_table(report["engine"])]
    for label, size in (report.get("unfinished") or {}).items():
        out += ["", f"**{label} not measured**: {size['states']:,} of {size['target_states']:,} "
                f"states built; {size['reason']}."]  # fmt: skip
        if "step_ms" in size:
            out += ["", f"Measured at the {size['states']:,} states reached:", "",
                    *engine_table({f"{size['states']:,}": size})]  # fmt: skip
    if report.get("scale"):
        out += ["", "## Scale: 1M states against 10k (same run)", "", *scale_table(report["scale"])]
    if report.get("cli"):
        out += ["", "## Command-line start-up", "", *cli_table(report["cli"])]
    if report.get("tokens"):
        out += token_report.sections(report["tokens"])
    if report.get("notes"):
        out += ["", "## Notes", "", *[f"- {n}" for n in report["notes"]]]
    if report.get("plots"):
        out += ["", "## Plots", "", *[f"![{p}]({p})" for p in report["plots"]]]
    return "\n".join(out) + "\n"
