"""group_travel_planner scoring, rule for rule as MemoryArena's evaluation code reads a run.

The code does not score each traveler's answer on its own. It writes the base person's plan,
appends every answer after a blank line, splits the whole text at `=== Name's Plan ===`
headers (a later section of the same name replaces the earlier one), and parses each
traveler's section into days. A day starts at `Day N:` (case-sensitive, the space optional,
anywhere in the text) and runs to the next one; its `key: value` lines fill it. Then:

- a slot passes when `similarity(gold, submitted) >= 0.7`; the shorter string bounds both,
  so a prefix passes; an empty or whitespace-only value never does;
- a day is looked up by its index, type and all (`1`, not `"1"`), and the FIRST day with that
  index counts;
- a traveler passes when every gold day is found and its six slots pass;
- constraint slots are the (day, slot) pairs where the gold differs from the base person's
  gold; days the base has not are skipped.

>>> similarity("Subway", "Subway, Rockford"), similarity("  ", "x")
(1.0, 0.0)
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

SLOTS = ("breakfast", "lunch", "dinner", "accommodation", "transportation", "attraction")
SLOT_PASS = 0.7
# The plan lines in the order the code writes them (and asks the agent for).
PLAN_KEYS = (
    "current_city",
    "transportation",
    "breakfast",
    "attraction",
    "lunch",
    "dinner",
    "accommodation",
)

Day = dict[str, Any]
HEADER = re.compile(r"===\s*([^=]+?)'s Plan\s*===")
DAY_MARK = re.compile(r"Day\s*(\d+):")
NAME = re.compile(r"I am (\w+)\.")
NO_PLAN = ("", "Max Token Length Exceeded.")  # answers the code treats as no plan at all


def similarity(a: Any, b: Any) -> float:
    """0 when either value is empty; 1 for `-` against `-`; else difflib's ratio of the two,
    both cut to the shorter length after strip and lowercase."""
    if not a or not b:
        return 0.0
    a, b = str(a).strip().lower(), str(b).strip().lower()
    if a == "-" and b == "-":
        return 1.0
    m = min(len(a), len(b))
    return difflib.SequenceMatcher(None, a[:m], b[:m]).ratio() if m else 0.0


def traveler_name(question: str) -> str:
    """The name the code files a traveler under: `I am X.` at the very start, else Person."""
    found = NAME.match(question)
    return found.group(1) if found else "Person"


def day_key(day: Day) -> Any:
    """A gold day's index as the code reads it (`days`, else `day`), type unchanged."""
    return day.get("days") or day.get("day")


def format_plan(name: str, days: Sequence[Day]) -> str:
    """A plan as the code writes the base person's: header, then per day its seven lines and
    a blank line."""
    lines = [f"=== {name}'s Plan ==="]
    for day in days:
        lines.append(f"Day {day_key(day)}:")
        lines += [f"{k.replace('_', ' ').title()}: {day.get(k, '-')}" for k in PLAN_KEYS]
        lines.append("")
    return "\n".join(lines)


def split_plans(text: str) -> dict[str, str]:
    """Name -> section text (stripped), split at the headers; a repeated name's later section
    wins. Text before the first header belongs to no one."""
    parts = HEADER.split(text)
    return {parts[i].strip(): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def parse_plan(section: str | None) -> list[Day] | None:
    """The days of a section in order, repeats kept; None when it has none."""
    if not section or section in NO_PLAN:
        return None
    marks = list(DAY_MARK.finditer(section))
    days = []
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(section)
        day: Day = {"day": int(mark.group(1))}
        for line in section[mark.end() : end].strip().split("\n"):
            if ":" in line:
                key, value = line.split(":", 1)
                day[key.strip().lower().replace(" ", "_")] = value.strip()
        days.append(day)
    return days or None


def find_day(plan: Sequence[Day] | None, index: Any) -> Day | None:
    """The first day whose `day` or `days` equals the index."""
    for day in plan or ():
        if day.get("day") == index or day.get("days") == index:
            return day
    return None


def constraint_slots(gold: Sequence[Day], base: Sequence[Day]) -> set[tuple[Any, str]]:
    """The (day, slot) pairs where this traveler's gold departs from the base person's."""
    if not gold or not base:
        return set()
    found: set[tuple[Any, str]] = set()
    for day in gold:
        index = day_key(day)
        base_day = find_day(base, index)
        if not base_day:
            continue
        found.update(
            (index, s) for s in SLOTS if similarity(base_day.get(s, "-"), day.get(s, "-")) < 0.7
        )
    return found


def slot_passes(gold: Sequence[Day], plan: Sequence[Day] | None, index: Any, slot: str) -> bool:
    gold_day, day = find_day(gold, index), find_day(plan, index)
    if not gold or not plan or not gold_day or not day:
        return False
    return similarity(gold_day.get(slot, "-"), day.get(slot, "-")) >= SLOT_PASS


def person_passes(gold: Sequence[Day] | None, plan: Sequence[Day] | None) -> bool:
    if not gold or not plan:
        return False
    for gold_day in gold:
        day = find_day(plan, day_key(gold_day))
        if not day:
            return False
        if any(similarity(gold_day.get(s, "-"), day.get(s, "-")) < SLOT_PASS for s in SLOTS):
            return False
    return True


@dataclass(frozen=True)
class PersonScore:
    name: str
    parsed_days: list[Any]
    passed: bool
    constraint_slots: int
    constraint_passed: int

    @property
    def constraint_rate(self) -> float | None:
        """Passed / constraint slots; None (skipped in sPS) without constraint slots."""
        slots = self.constraint_slots
        return self.constraint_passed / slots if slots else None


@dataclass(frozen=True)
class GroupScore:
    persons: list[PersonScore]

    @property
    def passed(self) -> list[bool]:
        return [p.passed for p in self.persons]

    @property
    def constraint_rate(self) -> float | None:
        """The group's sPS: the mean constraint rate of travelers that have constraint slots."""
        rates = [r for p in self.persons if (r := p.constraint_rate) is not None]
        return sum(rates) / len(rates) if rates else None


def score_person(
    name: str, gold: Sequence[Day] | None, base: Sequence[Day] | None, section: str
) -> PersonScore:
    plan = parse_plan(section)
    gold = list(gold or [])
    slots = constraint_slots(gold, list(base or []))
    counted = [(day_key(d), s) for d in gold for s in SLOTS if (day_key(d), s) in slots]
    passed = sum(slot_passes(gold, plan, i, s) for i, s in counted)
    days = [d["day"] for d in plan or ()]
    return PersonScore(name, days, person_passes(gold, plan), len(counted), passed)


def score_group(row: dict[str, Any], outputs: Sequence[str]) -> GroupScore:
    """Score one group's answers (in question order) against its HF row, as the code does
    after the last traveler: the base plan and every answer read as one text."""
    base = row["base_person"]
    text = format_plan(base["name"], base["daily_plans"])
    for output in outputs:
        text += f"\n\n{output}"
    sections = split_plans(text)
    answers = list(row.get("answers") or [])
    persons = []
    for i, question in enumerate(row["questions"][: len(outputs)]):
        name = traveler_name(question)
        gold = answers[i] if i < len(answers) else None
        persons.append(score_person(name, gold, base["daily_plans"], sections.get(name, "")))
    return GroupScore(persons)
