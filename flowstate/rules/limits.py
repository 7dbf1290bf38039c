"""Limits the rules enforce; one value object so that an agent can be tuned in one place."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from flowstate.models.config import CheckedConfig
from flowstate.models.records import MAX_CONTENT_CHARS, MAX_SUMMARY_CHARS


class Limits(CheckedConfig):
    """What one step may hold; a value out of its bounds is a UsageError naming it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_ops_per_step: int = Field(20, ge=1)
    max_access_per_step: int = Field(8, ge=1, description="K: past states revealed per step")
    max_summary_chars: int = Field(200, ge=10, le=MAX_SUMMARY_CHARS)
    max_content_chars: int = Field(4_000, ge=10, le=MAX_CONTENT_CHARS)
    max_relations_per_state: int = Field(8, ge=0)
    max_states_per_request: int = Field(60, ge=1)
