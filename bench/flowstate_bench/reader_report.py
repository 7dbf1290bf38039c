"""The reader beside the oracle, as both harnesses report it: per group and strategy, recall,
success and tokens of each agent, and whether the strategy gives the reader anything to choose.

Only FlowState with its index (and without ISU) leaves the choice of what to open to the agent;
every other strategy puts its memory in the prompt (all of it, or what its own retrieval
picked), so there the reader does what the oracle does, by construction.
"""

from __future__ import annotations

from typing import Any

# Strategies whose prompt shows an index the agent opens states from.
CHOOSES = frozenset({"flowstate", "flowstate_no_isu"})
SAME = "equals the oracle: nothing to open (the memory is in the prompt)"


def row(
    group: str, strategy: str, oracle: dict[str, Any], reader: dict[str, Any]
) -> dict[str, Any]:
    return {
        "group": group,
        "strategy": strategy,
        "oracle": oracle,
        "reader": reader,
        "reader_chooses": strategy in CHOOSES,
        "note": "" if strategy in CHOOSES else SAME,
    }


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def markdown(rows: list[dict[str, Any]], metrics: list[tuple[str, str]]) -> list[str]:
    """`metrics`: (key, column title) pairs, each shown as oracle / reader."""
    if not rows:
        return []
    head = "| group | strategy | " + " | ".join(f"{t} (oracle / reader)" for _, t in metrics)
    out = [
        "## The reader beside the oracle",
        "",
        "The reader opens only what the prompt shows it (index lines, relation ends), ranked "
        "by lexical match with the request, at most 3 ids a step over at most 2 steps; its "
        "actions are the oracle's given what it opened. Recall: the share of memory-dependent "
        "subtasks or turns whose needed facts were in what the agent was shown.",
        "",
        head + " | note |",
        "|---|---|" + "---|" * len(metrics) + "---|",
    ]
    for r in rows:
        cells = [f"{_cell(r['oracle'].get(k))} / {_cell(r['reader'].get(k))}" for k, _ in metrics]
        out.append(f"| {r['group']} | {r['strategy']} | " + " | ".join(cells) + f" | {r['note']} |")
    return out + [""]
