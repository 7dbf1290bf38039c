"""Offline conversations derived from a task: what a scripted user says, turn by turn, and
which reference actions answer each turn.

The split is what makes memory matter: the first turn gives who the user is and what they
want, and the agent looks things up and lists the changes it will make; every change then
waits for its own "yes" in a later turn, so its arguments (ids, payment methods, items) must
come from what the agent kept of the earlier turns.

>>> first_person("You are Emma Kim. Your user id is emma_kim_9957.")
'I am Emma Kim. My user id is emma_kim_9957.'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from flowstate_bench.tau.data import Action, Task

CONFIRM = "Yes, please go ahead."

_PRONOUNS = [
    (r"\bYou are\b", "I am"),
    (r"\byou are\b", "I am"),
    (r"\bYou're\b", "I'm"),
    (r"\byou're\b", "I'm"),
    (r"\bYou'd\b", "I'd"),
    (r"\byou'd\b", "I'd"),
    (r"\bYour\b", "My"),
    (r"\byour\b", "my"),
    (r"\bYou\b", "I"),
    (r"\byou\b", "I"),
]


def first_person(text: str) -> str:
    """The scenario's second-person notes as the user would say them (roughly)."""
    for pattern, replacement in _PRONOUNS:
        text = re.sub(pattern, replacement, text)
    return text


@dataclass(frozen=True)
class Plan:
    """The turns of one offline conversation and the reference actions of each turn."""

    task: Task
    turns: list[str]
    segments: list[list[Action]]

    @property
    def last(self) -> int:
        return len(self.turns) - 1


def derive_plan(task: Task, write_tools: frozenset[str]) -> Plan:
    """Turn 0: the opening, answered by the look-ups before the first change. Then one turn
    per change: the user's "yes", answered by that change and the look-ups after it."""
    segments: list[list[Action]] = [[]]
    for action in task.actions:
        if action.name in write_tools:
            segments.append([])
        segments[-1].append(action)
    opening = first_person(task.scenario.opening()) or "Hello, I need some help."
    turns = [opening] + [CONFIRM] * (len(segments) - 1)
    return Plan(task, turns, segments)
