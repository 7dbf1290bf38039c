"""The token tables of docs/performance.md, written from a token suite report
(bench/results/tokens.json, written by `flowstate bench tokens`).

Each table sits between `<!-- tokens:NAME -->` and `<!-- /tokens:NAME -->` in the page;
`write` replaces what is between them, `tables` gives what belongs there, so a test can hold
the page to the committed report. Regenerate both in one command from the repository root:

    flowstate bench tokens --out bench/results --doc docs/performance.md
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flowstate_bench.token_report import name as label
from flowstate_bench.token_report import resend_table, table

Tokens = dict[str, Any]
FIXED_ROW = ("flowstate", "flowstate_reader", "full_context", "bm25", "rolling_summary",
             "flowstate_no_psa")  # fmt: skip


def _suite(tokens: Tokens) -> list[str]:
    """Per depth: tokens per request (prompt + completion) of each strategy, share of full
    context's, recall where it is below 1 or the strategy chooses what to show."""
    header = ["depth", "FlowState", "FlowState, reader", "full context", "BM25 top-4",
              "rolling summary\\*", "FlowState without PSA"]  # fmt: skip
    rows = []
    for depth, figures in tokens["by_depth"].items():
        cells = []
        for name in FIXED_ROW:
            f = figures[name]
            cell = f"{f['tokens']:,.0f}"
            if name != "full_context":
                cell += f" ({f['ratio_to_full_context']:.0%})"
            if name in ("flowstate", "flowstate_reader", "bm25"):
                cell += f", recall {f['recall']:.2f}"
            if f["memory_write_calls"]:
                cell += f", +{f['memory_write_calls']:g} call"
            cells.append(cell)
        rows.append([depth, *cells])
    return table(header, rows)


def _split(tokens: Tokens) -> list[str]:
    """Per depth: prompt and completion tokens per request apart."""
    header = ["depth", *[label(n) for n in FIXED_ROW]]
    rows = [
        [
            depth,
            *[
                f"{figures[n]['prompt_tokens']:,.0f} + {figures[n]['completion_tokens']:,.0f}"
                for n in FIXED_ROW
            ],
        ]  # fmt: skip
        for depth, figures in tokens["by_depth"].items()
    ]
    return table(header, rows)


PARTS = ("protocol", "tools", "index", "active_state", "request", "framing")


def _parts(tokens: Tokens) -> list[str]:
    header = ["depth", *[p.replace("_", " ") for p in PARTS], "completion",
              "cached (real rules)", "largest shared prefix"]  # fmt: skip
    rows = []
    for depth, figures in tokens["by_depth"].items():
        f = figures["flowstate"]
        rows.append([depth, *[f"{f['parts'][p]:,.0f}" for p in PARTS],
                     f"{f['completion_tokens']:,.0f}", f"{f['cached_share']:.0%}",
                     f"{f['largest_shared_prefix']:,}"])  # fmt: skip
    return table(header, rows)


def _kinds(tokens: Tokens) -> list[str]:
    header = ["depth", "call", "calls", "prompt", "fixed price", "completion", "shared prefix",
              "cached (automatic)", "breakpoints: read / written"]  # fmt: skip
    rows = []
    for depth, figures in tokens["by_depth"].items():
        for kind, f in figures["flowstate"]["call_kinds"].items():
            bp = f"{f['breakpoint_read']:,.0f} / {f['breakpoint_written']:,.0f}"
            cells = [f"{f[k]:,.0f}" for k in ("prompt_tokens", "fixed_price", "completion_tokens",
                                               "shared_prefix", "cached_prefix")]  # fmt: skip
            rows.append([depth, kind, str(f["calls"]), *cells, bp])
    return table(header, rows)


MATCHED = ("flowstate", "flowstate_reader", "recency_window", "bm25", "embedding",
           "rolling_summary", "full_context")  # fmt: skip


def _matched(block: Tokens) -> list[str]:
    header = ["depth", "FlowState", "FlowState, reader", "recency window", "BM25", "embedding",
              "rolling summary\\*", "full context"]  # fmt: skip
    rows = []
    for depth, figures in block["recall_matched"].items():
        cells = []
        for name in MATCHED:
            m = figures["matched"].get(name)
            if m is None:
                cells.append("-")
                continue
            cell = f"{m['tokens']:,.0f}"
            if m["k"] is not None:
                cell += f", k = {m['k']}"
            if not m["reached"]:
                cell += f", recall {m['recall']:.2f}"
            cells.append(cell)
        rows.append([depth, *cells])
    return table(header, rows)


CACHED = ("flowstate", "flowstate_reader", "full_context", "bm25", "embedding",
          "rolling_summary", "flowstate_no_psa")  # fmt: skip
MODELS = (("10%", "automatic, read at 10%"), ("50%", "automatic, read at 50%"),
          ("breakpoints", "breakpoints"))  # fmt: skip


def _effective(f: dict[str, Any], model: str) -> float:
    return float(f["breakpoint_tokens"] if model == "breakpoints" else f["effective_tokens"][model])


def _cache(block: Tokens) -> list[str]:
    """Per depth and cache model: effective tokens per request of each fixed strategy and of
    the swept ones at the k they need for recall 1.0 (share of full context's)."""
    header = ["depth, cache", "FlowState", "FlowState, reader", "full context", "BM25 top-4",
              "embedding top-3", "rolling summary\\*", "FlowState without PSA",
              "recall 1.0: window / BM25 / embedding"]  # fmt: skip
    rows = []
    for depth, per in block["cache"].items():
        matched = block["recall_matched"][depth]["matched"]
        swept = [
            f"{n}@{matched[n]['k']}" if matched[n]["reached"] else None
            for n in ("recency_window", "bm25", "embedding")
        ]
        for model, cache_name in MODELS:
            cells = []
            for name in CACHED:
                f = per.get(name)
                value = "-" if f is None else f"{_effective(f, model):,.0f}"
                if f is not None and name != "full_context":
                    value += f" ({f['ratio_to_full_context'][model]:.0%})"
                cells.append(value)
            at_k = [
                "-" if key is None or key not in per else
                f"{_effective(per[key], model):,.0f} (k = {key.split('@')[1]})"
                for key in swept
            ]  # fmt: skip
            rows.append([f"{depth}, {cache_name}", *cells, " / ".join(at_k)])
    return table(header, rows)


def _prices(block: Tokens) -> list[str]:
    """Per depth: USD per 1,000 requests on each named model, no cache / its provider's."""
    depth = list(block["cache"])
    header = ["depth", "model", *[label(n) for n in CACHED]]
    rows = []
    for d in depth:
        per = block["cache"][d]
        models = list(per["flowstate"]["cost_usd"])
        for model in models:
            cells = []
            for name in CACHED:
                c = per[name]["cost_usd"][model]
                cells.append(f"{c['uncached'] * 1000:.2f} / {c['cached'] * 1000:.2f}")
            rows.append([d, model, *cells])
    return table(header, rows)


TABLES: dict[str, Callable[[Tokens], list[str]]] = {
    "suite": _suite,
    "split": _split,
    "parts": _parts,
    "kinds": _kinds,
    "matched": _matched,
    "far-back": lambda t: _matched(t["far_back"]),
    "cache": _cache,
    "cache-far-back": lambda t: _cache(t["far_back"]),
    "prices": _prices,
    "resend": lambda t: resend_table(t.get("sweep") or {}),
}


def tables(report: Path) -> dict[str, str]:
    """Every generated table of the page, from the report at `report`."""
    tokens = json.loads(report.read_text(encoding="utf-8"))["tokens"]
    return {name: "\n".join(build(tokens)) for name, build in TABLES.items()}


def _block(name: str) -> re.Pattern[str]:
    name = re.escape(name)
    return re.compile(rf"(^<!-- tokens:{name} -->\n)(.*?)(^<!-- /tokens:{name} -->$)", re.S | re.M)


def in_page(page: str) -> dict[str, str]:
    """The tables the page holds now, by name (each as `tables` gives it)."""
    out = {}
    for name in TABLES:
        match = _block(name).search(page)
        if match:
            out[name] = match.group(2).removesuffix("\n")
    return out


def render(page: str, generated: dict[str, str]) -> str:
    """`page` with every marked table replaced by its generated text."""
    for name, text in generated.items():
        pattern = _block(name)
        match = pattern.search(page)
        if match is None:
            raise ValueError(f"the page has no <!-- tokens:{name} --> block")
        page = page[: match.start(2)] + text + "\n" + page[match.end(2) :]
    return page


def write(report: Path, page: Path) -> None:
    page.write_text(render(page.read_text(encoding="utf-8"), tables(report)), encoding="utf-8")


if __name__ == "__main__":  # python -m flowstate_bench.perf_doc [report] [page]
    import sys

    args = sys.argv[1:]
    write(Path(args[0] if args else "bench/results/tokens.json"),
          Path(args[1] if len(args) > 1 else "docs/performance.md"))  # fmt: skip
