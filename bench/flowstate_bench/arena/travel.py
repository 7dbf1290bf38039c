"""group_travel_planner: travelers join a base trip one by one; each one's constraints refer to
the base person or to earlier travelers' choices."""

from __future__ import annotations

import json
from typing import Any

from flowstate.engine.tools import Tool
from flowstate.models.records import Usage
from flowstate_bench.arena.data import ArenaTask, normalise
from flowstate_bench.arena.domain import Call, Scored
from flowstate_bench.arena.travel_env import TravelDB, TravelEnv
from flowstate_bench.arena.travel_score import (
    SLOTS,
    constraint_slots,
    day_key,
    find_day,
    format_plan,
    score_group,
    traveler_name,
)

POLICY = (
    "You are a travel planner with six tools: FlightSearch, RestaurantSearch, "
    "AccommodationSearch, AttractionSearch, DistanceMatrix, CitySearch. Search first, then "
    "give the plan. Output format, exactly: a header line `=== {Name}'s Plan ===`, then per "
    "day `Day N:` followed by the lines `Current City:`, `Transportation:`, `Breakfast:`, "
    "`Attraction:`, `Lunch:`, `Dinner:`, `Accommodation:`. Write `-` when a slot does not "
    "apply; copy names exactly as the tools print them, suffixed with `, City`; separate "
    "attractions with `;`; no prices and no explanations."
)
traveler = traveler_name  # `I am X.` at the start of the question, else Person


class TravelTask:
    def __init__(self, task: ArenaTask, db: TravelDB) -> None:
        self.task = task
        self.usage = Usage()  # its tools call no model
        self.env = TravelEnv(db)
        self._tools = self.env.tools()
        self.base: dict[str, Any] = task.row["base_person"]
        self.base_plan = format_plan(self.base["name"], self.base["daily_plans"])

    def tools(self) -> list[Tool]:
        return self._tools

    def base_chunks(self) -> list[str]:
        chunk = {
            "name": self.base["name"],
            "query": self.base["query"],
            "is_base_person": True,
            "final_plan": self.base_plan,
        }
        return [json.dumps(chunk, ensure_ascii=False)]

    def base_request(self) -> str | None:
        return (
            "Remember this group trip's base traveler and plan; the travelers who join later "
            "will refer to it.\n" + self.base_chunks()[0]
        )

    def prompt(self, k: int) -> str:
        self.env.begin()
        question = self.task.questions[k - 1]
        name = traveler(question)
        return (
            f"Please plan the trip for {name}. {name}'s request: {question}\n"
            f"Start your answer with the header === {name}'s Plan ==="
        )

    def chunks(self, k: int, answer: str) -> list[str]:
        question = self.task.questions[k - 1]
        step = {
            "step_idx": 0,
            "thought": "",
            "final_output": answer,
            "tool_calls": [
                {"id": f"call_{i}", "name": c.name, "args": c.args}
                for i, c in enumerate(self.env.calls)
            ],
            "tool_results": [
                {"tool_call_id": f"call_{i}", "name": c.name, "result": c.result}
                for i, c in enumerate(self.env.calls)
            ],
        }
        chunk = {
            "name": traveler(question),
            "query": question,
            "scratchpad": [step] if self.env.calls else [],
            "final_plan": answer,
        }
        return [json.dumps(chunk, ensure_ascii=False)]

    def gold_chunks(self, j: int) -> list[str]:
        question = self.task.questions[j - 1]
        name = traveler(question)
        plan = format_plan(name, self.task.answers[j - 1])
        chunk = {"name": name, "query": question, "scratchpad": [], "final_plan": plan}
        return [json.dumps(chunk, ensure_ascii=False)]

    def note(self, k: int, answer: str) -> str:
        return answer

    def outcome(self, k: int, answer: str) -> str:
        return answer

    def score(self, outcomes: list[str]) -> Scored:
        """As MemoryArena's code reads a run (see `travel_score`): the base plan and every
        output as one text, each traveler scored on the section under their own name."""
        group = score_group(self.task.row, outcomes)
        graded = [
            rate if (rate := p.constraint_rate) is not None else float(p.passed)
            for p in group.persons
        ]
        return Scored(group.passed, graded, group.constraint_rate)

    def gold_fact(self, j: int) -> str:
        """A plan line as the output format writes it, e.g. `Lunch: Nutri Punch, Rockford`:
        the first slot where traveler j differs from the base (j = 0: the base's stay)."""
        base = self.base["daily_plans"]
        if j == 0:
            return f"Accommodation: {base[0].get('accommodation', '-')}"
        gold = self.task.answers[j - 1]
        slots = constraint_slots(gold, base)
        first = next(
            ((day_key(d), s) for d in gold for s in SLOTS if (day_key(d), s) in slots), None
        )
        if first is None:
            return f"=== {traveler(self.task.questions[j - 1])}'s Plan ==="
        day = find_day(gold, first[0]) or {}
        return f"{first[1].title()}: {day[first[1]]}"

    def next_call(self, k: int, good: bool, text: str, done: int) -> Call | None:
        if done >= 2:
            return None
        city = _destination(self.task.answers[k - 1])
        name = ("RestaurantSearch", "AccommodationSearch")[done]
        return {"name": name, "arguments": {"city": city}}

    def final(self, k: int, good: bool, text: str) -> str:
        name = traveler(self.task.questions[k - 1])
        if good:
            return format_plan(name, self.task.answers[k - 1])
        if normalise(self.gold_fact(0)) in normalise(text):
            return format_plan(name, self.base["daily_plans"])  # copies the base, misses the rest
        days = [{"days": d["days"], **dict.fromkeys(SLOTS, "-")} for d in self.task.answers[k - 1]]
        return format_plan(name, days)


def _destination(days: list[dict[str, Any]]) -> str:
    first = str(days[0].get("current_city", ""))
    city = first.split(" to ", 1)[1] if " to " in first else first
    return city.strip()
