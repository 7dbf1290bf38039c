"""Retention: how long each kind of memory is kept, per namespace.

A policy maps a category (or "observation") to a number of days; a kind that is not named,
or named with None, is kept forever.

>>> RetentionPolicy.parse('{"observation": 30, "environment": 90, "preference": null}').describe()
'observation: 30 days, environment: 90 days, preference: forever'
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from flowstate.errors import UsageError
from flowstate.models.records import utcnow
from flowstate.models.vocab import Category

if TYPE_CHECKING:
    from flowstate.store import Repository

Kind = Category | Literal["observation"]


class RetentionPolicy(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    days: dict[Kind, int | None] = Field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> RetentionPolicy:
        """From JSON like `{"observation": 30, "preference": null}`; a clear error otherwise."""
        try:
            data = json.loads(text)
            return cls(days=data)
        except (ValueError, ValidationError) as e:
            kinds = ", ".join([*(c.value for c in Category), "observation"])
            raise UsageError(
                f"invalid retention policy {text[:80]!r}: expected a JSON object mapping "
                f"{kinds} to a number of days (or null for forever)"
            ) from e

    def cutoffs(self, now: datetime | None = None) -> dict[Kind, datetime]:
        """What to expire: for each limited kind, records created before this instant."""
        now = now or utcnow()
        return {kind: now - timedelta(days=d) for kind, d in self.days.items() if d is not None}

    def describe(self) -> str:
        if not self.days:
            return "keep everything"
        return ", ".join(
            f"{k}: {'forever' if d is None else f'{d} days'}" for k, d in self.days.items()
        )


def apply_retention(
    repo: Repository, policy: RetentionPolicy, now: datetime | None = None
) -> dict[str, dict[str, int]]:
    """Expire what the policy no longer keeps; returns the deleted counts per kind."""
    return {
        str(kind): repo.expire(kind, before).model_dump()
        for kind, before in policy.cutoffs(now).items()
    }
