"""The names the arena command offers as choices, kept free of imports: the command line's
help lists them without loading the harness."""

from __future__ import annotations

from typing import Literal

CONFIGS = (
    "bundled_shopping",
    "group_travel_planner",
    "formal_reasoning_math",
    "formal_reasoning_phys",
)
# How shopping success is judged: MemoryArena's evaluation code (any purchase scoring 1.0),
# or the paper's text (the target product only).
Scoring = Literal["code", "paper"]
SCORINGS: tuple[Scoring, ...] = ("code", "paper")
