"""The names the command lines offer are the strategies the harnesses build."""

from __future__ import annotations

from flowstate_bench import strategy_names
from flowstate_bench.arena.memories import MEMORIES
from flowstate_bench.arena.runner import STRATEGIES as ARENA
from flowstate_bench.tau.strategies import STRATEGIES as TAU


def test_the_arena_offers_exactly_its_memories() -> None:
    assert tuple(MEMORIES) == strategy_names.ARENA_MEMORIES
    assert ARENA == strategy_names.ARENA


def test_tau_offers_its_strategies_and_its_defaults_and_aliases_are_among_them() -> None:
    assert TAU == strategy_names.TAU
    assert set(strategy_names.TAU_DEFAULT) <= set(TAU)
    assert set(strategy_names.ALIASES.values()) <= set(TAU) & set(ARENA)
