"""Retention: how long each kind of memory is kept, per namespace.

A policy maps a category (or "observation") to a number of days; a kind that is not named,
or named with None, is kept forever.

>>> RetentionPolicy.parse('{"observation": 30, "environment": 90, "preference": null}').describe()
'observation: 30 days, environment: 90 days, preference: forever'
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError

from flowstate.errors import UsageError
from flowstate.models.records import utcnow
from flowstate.models.vocab import Category

if TYPE_CHECKING:
    from flowstate.store.ops import Ops
    from flowstate.store.plans import Plan

Kind = Category | Literal["observation"]
MAX_DAYS = 36_500  # a hundred years; longer is "forever", which null already says
Days = Annotated[StrictInt, Field(ge=0, le=MAX_DAYS)]


class RetentionPolicy(BaseModel):
    """Days to keep each kind: 0 to 36,500 (0 expires everything of that kind at once), or
    null for forever. Negative, fractional or larger numbers are refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    days: dict[Kind, Days | None] = Field(default_factory=dict)

    @classmethod
    def parse(cls, text: str, source: str = "retention policy") -> RetentionPolicy:
        """From JSON like `{"observation": 30, "preference": null}`; a clear error otherwise,
        naming `source` (e.g. the FLOWSTATE_RETENTION variable it came from)."""
        kinds = ", ".join([*(c.value for c in Category), "observation"])
        expected = (
            f"expected a JSON object mapping {kinds} to a whole number of days from 0 to "
            f"{MAX_DAYS} (or null for forever)"
        )
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as e:  # RecursionError: nested past Python's limit
            raise UsageError(f"{source}: {text[:80]!r} is not JSON; {expected}") from e
        if not isinstance(data, dict):
            raise UsageError(f"{source}: {text[:80]!r} is not a JSON object; {expected}")
        try:
            return cls(days=data)
        except ValidationError as e:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc'][1:2]) or 'policy'}: {err['msg']}"
                for err in e.errors()[:3]
            )
            raise UsageError(f"{source}: invalid {text[:80]!r} ({problems}); {expected}") from e

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
    ops: Ops, policy: RetentionPolicy, now: datetime | None = None
) -> Plan[dict[str, dict[str, Any]]]:
    """Expire what the policy no longer keeps (a plan: `repo.run(apply_retention(repo.ops,
    policy))`); per kind, the deleted counts (`nodes`, `relationships`) and what was left
    behind (`superseded`, `dependents`: see `flowstate.store.reading.Removal`)."""
    from flowstate.store.forgetting import expire  # the policy alone needs no Neo4j driver

    deleted: dict[str, dict[str, Any]] = {}
    for kind, before in policy.cutoffs(now).items():
        deleted[str(kind)] = (yield from expire(ops, kind, before)).model_dump()
    return deleted
