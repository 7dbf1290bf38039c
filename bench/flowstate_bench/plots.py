"""PNG plots of a report (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flowstate_bench.report import ENGINE_ROWS
from flowstate_bench.token_report import STRATEGY_NAMES

_LATENCY = ("step_ms", "commit_ms", "reveal_ms", "index_render_ms", "index_update_ms")


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # before pyplot is imported: never look for a display
    import matplotlib.pyplot as plt

    return plt


def engine_latency(engine: dict[str, Any], path: Path) -> None:
    plt = _pyplot()
    labels = dict(ENGINE_ROWS)
    sizes = sorted(engine.values(), key=lambda s: s["states"])
    xs = [s["states"] for s in sizes]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, stat in zip(axes, ("p50", "p99"), strict=True):
        for key in _LATENCY:
            ax.plot(xs, [s[key][stat] for s in sizes], marker="o", label=labels[key])
        ax.set(xscale="log", yscale="log", xlabel="states in the namespace", title=stat)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("ms")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def token_series(tokens: dict[str, Any], path: Path) -> None:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name, series in tokens["series"].items():
        ax.plot(range(1, len(series) + 1), series, label=STRATEGY_NAMES.get(name, name))
    ax.set(xlabel="request", ylabel="tokens of the request (prompt + completion)", yscale="log")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def token_ratio_recall(tokens: dict[str, Any], path: Path) -> None:
    plt = _pyplot()
    depths = list(tokens["by_depth"])
    names = list(tokens["by_depth"][depths[0]])
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        xs = [d + (i - len(names) / 2) * width for d in range(len(depths))]
        figs = [tokens["by_depth"][d][name] for d in depths]
        label = STRATEGY_NAMES.get(name, name)
        left.bar(xs, [f["ratio_to_full_context"] for f in figs], width, label=label)
        right.bar(xs, [f["recall"] for f in figs], width, label=label)
    for ax, title in ((left, "tokens vs full context"), (right, "recall")):
        ax.set_xticks(range(len(depths)), [f"depth {d}" for d in depths])
        ax.set_title(title)
        ax.grid(True, axis="y", alpha=0.3)
    left.axhline(0.25, color="black", linewidth=0.8, linestyle="--")
    right.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def token_parts(tokens: dict[str, Any], path: Path) -> None:
    """FlowState's prompt tokens per request, stacked by prompt part, at each depth."""
    plt = _pyplot()
    depths = [d for d, f in tokens["by_depth"].items() if "parts" in f["flowstate"]]
    columns = [tokens["by_depth"][d]["flowstate"]["parts"] for d in depths]
    labels = [f"depth {d}" for d in depths]
    if tokens.get("demo"):
        n = max(len(tokens["demo"]["rows"]), 1)
        columns.append({p: v / n for p, v in tokens["demo"]["parts"].items()})
        labels.append("demo")
    fig, ax = plt.subplots(figsize=(8, 4.5))
    bottom = [0.0] * len(columns)
    for part in columns[0]:
        values = [c[part] for c in columns]
        ax.bar(labels, values, bottom=bottom, label=part.replace("_", " "))
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    ax.set(ylabel="prompt tokens per request (all calls)", title="FlowState prompt by part")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def token_recall_tradeoff(tokens: dict[str, Any], path: Path) -> None:
    """Tokens per request against recall at the deepest depth: a curve over k for the swept
    retrievers, one point for every other strategy."""
    plt = _pyplot()
    depth = list(tokens["recall_matched"])[-1]
    block = tokens["recall_matched"][depth]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, curve in block["curves"].items():
        ks = list(curve)
        xs, ys = [curve[k]["tokens"] for k in ks], [curve[k]["recall"] for k in ks]
        ax.plot(
            xs, ys, marker="o", label=f"{STRATEGY_NAMES.get(name, name)} (k = {ks[0]}..{ks[-1]})"
        )
    points = [(n, m) for n, m in block["matched"].items() if m["k"] is None]
    for i, (name, m) in enumerate(points):
        colour = f"C{i + len(block['curves'])}"
        label = STRATEGY_NAMES.get(name, name)
        ax.scatter([m["tokens"]], [m["recall"]], s=60, marker="D", color=colour, label=label)
    ax.set(xlabel="tokens per request (prompt + completion)", ylabel="recall", xscale="log",
           title=f"Tokens vs recall at depth {depth}", ylim=(0, 1.05))  # fmt: skip
    from matplotlib.ticker import NullFormatter

    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_all(report: dict[str, Any], out: Path) -> list[str]:
    """Every plot the report has data for; returns the file names written."""
    written = []
    if len(report.get("engine", {})) >= 1:
        engine_latency(report["engine"], out / "engine_latency.png")
        written.append("engine_latency.png")
    if report.get("tokens"):
        token_series(report["tokens"], out / "tokens_per_request.png")
        token_ratio_recall(report["tokens"], out / "tokens_ratio_recall.png")
        written += ["tokens_per_request.png", "tokens_ratio_recall.png"]
        if report["tokens"].get("recall_matched"):
            token_recall_tradeoff(report["tokens"], out / "tokens_vs_recall.png")
            written.append("tokens_vs_recall.png")
        if any("parts" in f["flowstate"] for f in report["tokens"]["by_depth"].values()):
            token_parts(report["tokens"], out / "tokens_parts.png")
            written.append("tokens_parts.png")
    return written
