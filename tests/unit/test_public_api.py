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


def test_every_public_name_is_imported_lazily_from_where_it_lives() -> None:
    import doctest
    import importlib

    from flowstate import lazy

    assert sorted(flowstate._EXPORTS) == flowstate.__all__
    for name, module in flowstate._EXPORTS.items():
        assert getattr(flowstate, name) is getattr(importlib.import_module(module), name)
    result = doctest.testmod(lazy)
    assert result.attempted > 0 and result.failed == 0
    assert set(dir(flowstate)) >= set(flowstate.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    import pytest

    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        flowstate.Nope  # noqa: B018
