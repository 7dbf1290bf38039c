"""The public API is what `flowstate.__all__` says, and every name in it works."""

from __future__ import annotations

import types

import flowstate


def test_all_names_exist_and_nothing_else_is_public() -> None:
    for name in flowstate.__all__:
        assert hasattr(flowstate, name), name
    public = {
        name
        for name, value in vars(flowstate).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(flowstate.__all__)


def test_all_is_sorted_and_unique() -> None:
    assert flowstate.__all__ == sorted(set(flowstate.__all__))


def test_the_entry_points_of_the_readme_are_exported() -> None:
    readme = ("FlowState", "Agent", "AgentConfig", "Tool", "ScriptedModel", "RunResult")
    for name in (*readme, "AsyncFlowState", "AsyncAgent", "Transcript"):
        assert name in flowstate.__all__
