"""MemoryArena's scores, exactly as its evaluation code computes them, plus our curve summaries.

Per subtask: shopping passes on the purchased ASIN (and has a graded reward), a travel person
passes when every day's six slots pass, a formal answer passes when the judge says yes.
Per task list: PS, SR, SR@k, nAUC, drop rate (the last two are ours; see `nauc`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

SLOTS = ("breakfast", "lunch", "dinner", "accommodation", "transportation", "attraction")
SLOT_PASS = 0.7
Day = dict[str, str]
Plan = dict[int, Day]  # day index -> slot -> value


# -- travel ---------------------------------------------------------------------------------


def slot_sim(a: str | None, b: str | None) -> float:
    """The eval's similarity: the shorter length bounds both strings, so prefixes match."""
    if not a or not b:
        return 0.0
    a, b = a.strip().lower(), b.strip().lower()
    if a == "-" and b == "-":
        return 1.0
    m = min(len(a), len(b))
    return difflib.SequenceMatcher(None, a[:m], b[:m]).ratio()


def day_index(day: dict[str, object]) -> int:
    value = day.get("days", day.get("day"))
    return int(str(value).strip())


def as_plan(days: Sequence[dict[str, object]]) -> Plan:
    return {day_index(d): {k: str(v) for k, v in d.items()} for d in days}


def person_passes(gt: Plan, submitted: Plan) -> bool:
    """Every GT day exists in the submission and all six slots pass; a missing slot is '-'."""
    for index, day in gt.items():
        sub = submitted.get(index)
        if sub is None:
            return False
        if any(slot_sim(day.get(s, "-"), sub.get(s, "-")) < SLOT_PASS for s in SLOTS):
            return False
    return True


def constraint_slots(gt: Plan, base: Plan) -> list[tuple[int, str]]:
    """The (day, slot) pairs where this person's GT differs from the base person's GT."""
    return [
        (index, s)
        for index, day in gt.items()
        for s in SLOTS
        if slot_sim(day.get(s, "-"), base.get(index, {}).get(s, "-")) < SLOT_PASS
    ]


def person_sps(gt: Plan, base: Plan, submitted: Plan) -> float | None:
    """Passed constraint slots / constraint slots; None (skipped) when there are none."""
    slots = constraint_slots(gt, base)
    if not slots:
        return None
    passed = sum(
        slot_sim(gt[i].get(s, "-"), submitted.get(i, {}).get(s, "-")) >= SLOT_PASS for i, s in slots
    )
    return passed / len(slots)


def group_sps(persons: Sequence[float | None]) -> float | None:
    scored = [p for p in persons if p is not None]
    return sum(scored) / len(scored) if scored else None


HEADER = re.compile(r"^===\s*(.+?)'s Plan\s*===\s*$", re.MULTILINE)
DAY = re.compile(r"^\s*Day\s+(\d+)\s*:\s*$", re.MULTILINE | re.IGNORECASE)


def parse_plans(text: str) -> dict[str, Plan]:
    """Split concatenated outputs at `=== Name's Plan ===` headers; a repeated name's later
    text wins. Within a plan, `Day N:` starts a day and `Key: value` lines fill it."""
    plans: dict[str, Plan] = {}
    heads = list(HEADER.finditer(text))
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        plans[head.group(1).strip()] = _parse_days(text[head.end() : end])
    return plans


def _parse_days(body: str) -> Plan:
    plan: Plan = {}
    current: Day | None = None
    for line in body.splitlines():
        day = DAY.match(line)
        if day:
            current = plan.setdefault(int(day.group(1)), {"days": day.group(1)})
            continue
        if current is None or ":" not in line:
            continue
        key, value = line.split(":", 1)
        current[key.strip().lower().replace(" ", "_")] = value.strip()
    return plan


def render_plan(name: str, days: Sequence[dict[str, object]]) -> str:
    """The output format the travel agent is asked for (and the base chunk's plan text)."""
    lines = [f"=== {name}'s Plan ==="]
    for d in days:
        lines.append(f"Day {day_index(d)}:")
        for key in ("current_city", *SLOTS_ORDERED):
            lines.append(f"{key.replace('_', ' ').title()}: {d.get(key, '-')}")
    return "\n".join(lines)


SLOTS_ORDERED = ("transportation", "breakfast", "attraction", "lunch", "dinner", "accommodation")


# -- shopping -------------------------------------------------------------------------------


def _norm_attr(text: str) -> str:
    return " ".join(re.sub(r"[-/]", " ", text.lower()).split())


def _tokens(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def name_sim(target: str, bought: str) -> float:
    wanted = _tokens(target)
    return len(wanted & _tokens(bought)) / len(wanted) if wanted else 0.0


def cat_sim(target_path: str, bought_path: str) -> float:
    wanted = {s.strip().lower() for s in target_path.split("›") if s.strip()}
    got = {s.strip().lower() for s in bought_path.split("›") if s.strip()}
    return len(wanted & got) / len(wanted) if wanted else 0.0


def type_reward(target_name: str, bought_name: str, target_path: str, bought_path: str) -> float:
    ns = name_sim(target_name, bought_name)
    r = 1.0 if cat_sim(target_path, bought_path) >= 0.5 or ns > 0.2 else 0.5
    if ns == 0:
        return 0.0
    return 0.1 if ns < 0.1 else r


@dataclass(frozen=True)
class Product:
    asin: str
    name: str
    category_path: str = ""


def shopping_reward(bought: Product | None, target: Product, attributes: Sequence[str]) -> float:
    """The graded reward with the `--no-llm` attribute match (substring of the name)."""
    if bought is None:
        return 0.0
    if bought.asin.upper() == target.asin.upper():
        return 1.0
    name = _norm_attr(bought.name)
    matched = sum(_norm_attr(a) in name for a in attributes)
    r_type = type_reward(target.name, bought.name, target.category_path, bought.category_path)
    return r_type * matched / len(attributes) if attributes else 0.0


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
