"""The fixed vocabularies: state categories and relation types.

Both end up as Neo4j labels and relationship types, so they come only from these enums,
never from model or user text.
"""

from __future__ import annotations

from enum import StrEnum


class Category(StrEnum):
    """What kind of knowledge a state holds."""

    PREFERENCE = "preference"  # what the user likes; soft, can be traded off
    CONSTRAINT = "constraint"  # a user requirement that must hold
    ENVIRONMENT = "environment"  # a fact about the world or the tools, usually observed
    DECISION = "decision"  # a judgment or choice the agent made, with its reasons
    ARTIFACT = "artifact"  # something the agent produced: a plan, a booking, a draft

    @property
    def label(self) -> str:
        """The extra Neo4j label that lets Browser colour states by category."""
        return self.value.capitalize()

    @property
    def description(self) -> str:
        return _CATEGORY_TEXT[self]


_CATEGORY_TEXT = {
    Category.PREFERENCE: "soft",
    Category.CONSTRAINT: "must hold",
    Category.ENVIRONMENT: "facts of the world and tools",
    Category.DECISION: "a choice and why",
    Category.ARTIFACT: "plan, booking, draft",
}


class RelationType(StrEnum):
    """Typed edges from a new state to a state that already exists."""

    DERIVED_FROM = "DERIVED_FROM"  # this state was inferred from the target
    DEPENDS_ON = "DEPENDS_ON"  # this state stays valid only while the target does
    REFINES = "REFINES"  # this state narrows or details the target
    SUPERSEDES = "SUPERSEDES"  # this state replaces the target, which is now stale or wrong
    CONTRADICTS = "CONTRADICTS"  # this state conflicts with the target; both are kept

    @property
    def description(self) -> str:
        return _RELATION_TEXT[self]


_RELATION_TEXT = {
    RelationType.DERIVED_FROM: "inferred from it",
    RelationType.DEPENDS_ON: "valid while it is",
    RelationType.REFINES: "narrows it",
    RelationType.SUPERSEDES: "it is stale",
    RelationType.CONTRADICTS: "both kept",
}

# A state cites a raw tool observation as evidence through this relationship type.
EVIDENCE = "EVIDENCED_BY"
# Structural relationship types, never chosen by the model.
PRODUCED = "PRODUCED"
NEXT = "NEXT"
