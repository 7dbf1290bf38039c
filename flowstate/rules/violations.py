"""A rule violation: what was refused and why, worded for the model to act on."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Violation:
    where: str  # e.g. "delta[2] add hotel_budget" or "access r3.flight"
    rule: str  # a stable code, for tests and logs
    message: str  # what the model is told

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"
