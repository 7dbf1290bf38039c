"""MemoryArena's figures over task lists, exactly as its evaluation code computes them, plus our
curve summaries; the offline formal judge.

A subtask's pass comes from its config's scorer (`shopping_score`, `travel_score`, the formal
judge). Per task list: PS, SR, SR@k and the formal eval's cumulative and min-k pass rates, then
nAUC and drop rate (ours; see `nauc`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# -- formal ---------------------------------------------------------------------------------


def normalise_answer(text: str) -> str:
    """The offline judge's normal form: no `$`, no LaTeX spacing, no whitespace, lowercase."""
    text = text.strip().strip("$").strip()
    text = re.sub(r"\\[,;:! ]|\\(left|right)\b", "", text)
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    return re.sub(r"\s+", "", text).lower()


def exact_match(answer: str, gold: str) -> bool:
    return bool(answer.strip()) and normalise_answer(answer) == normalise_answer(gold)


# -- aggregates over tasks ------------------------------------------------------------------


def progress_score(tasks: Sequence[Sequence[bool]]) -> float:
    """PS: the mean over tasks of the share of subtasks passed (macro). A task without
    subtasks cannot be scored and is refused (the loader never makes one)."""
    _scorable(tasks)
    return sum(sum(t) / len(t) for t in tasks) / len(tasks) if tasks else 0.0


def success_rate(tasks: Sequence[Sequence[bool]], last_only: bool) -> float:
    """SR: shopping and travel need every subtask; formal reasoning only the last."""
    _scorable(tasks)
    if not tasks:
        return 0.0
    return sum((t[-1] if last_only else all(t)) for t in tasks) / len(tasks)


def _scorable(tasks: Sequence[Sequence[bool]]) -> None:
    if any(len(t) == 0 for t in tasks):
        raise ValueError("a task without subtasks cannot be scored")


def micro_ps(tasks: Sequence[Sequence[bool]]) -> float:
    """The travel code's PS: passing persons over all persons."""
    total = sum(len(t) for t in tasks)
    return sum(sum(t) for t in tasks) / total if total else 0.0


def sr_at_k(tasks: Sequence[Sequence[bool]]) -> list[float]:
    """SR@k for k = 1..longest: tasks whose k-th subtask passed / tasks with >= k subtasks."""
    longest = max((len(t) for t in tasks), default=0)
    curve = []
    for k in range(1, longest + 1):
        having = [t for t in tasks if len(t) >= k]
        curve.append(sum(t[k - 1] for t in having) / len(having))
    return curve


def cumulative_passrate_at_k(tasks: Sequence[Sequence[bool]]) -> list[float]:
    """The formal eval's `cummulative_passrate_at_k`: subtasks passed at depths 1..k over
    subtasks present at depths 1..k, pooled over tasks (not "the first k all passed")."""
    curve, passed, present = [], 0, 0
    for k in range(1, max((len(t) for t in tasks), default=0) + 1):
        having = [t for t in tasks if len(t) >= k]
        passed += sum(t[k - 1] for t in having)
        present += len(having)
        curve.append(passed / present)
    return curve


def min_k(tasks: Sequence[Sequence[bool]]) -> int | None:
    """The shortest task's length, where the eval cuts its `*_at_min_k` curves."""
    return min((len(t) for t in tasks), default=None)


def nauc(curve: Sequence[float], depth: int) -> float | None:
    """Ours: the trapezoid area under SR@1..SR@K on a unit axis, divided by K-1 (so in [0, 1]).
    K is cut to the curve's length when the tasks are shorter; None below two points."""
    k = min(depth, len(curve))
    if k < 2:
        return None
    return sum((curve[i] + curve[i + 1]) / 2 for i in range(k - 1)) / (k - 1)


def drop_rate(curve: Sequence[float], depth: int) -> float | None:
    """Ours: (SR@1 - SR@K) / SR@1 with the same K; None when SR@1 is 0."""
    k = min(depth, len(curve))
    if k < 1 or curve[0] == 0:
        return None
    return (curve[0] - curve[k - 1]) / curve[0]
