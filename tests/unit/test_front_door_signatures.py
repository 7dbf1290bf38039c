"""The sync and the async front doors (and their sessions and browses) offer the same methods:
the same names and parameters, each async twin awaited and returning the async twin of the
sync result. A method added to one shell alone fails here."""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest

from flowstate.api import FlowState
from flowstate.async_api import AsyncFlowState
from flowstate.engine.async_session import AsyncSession
from flowstate.engine.browse import AsyncBrowse, Browse
from flowstate.engine.session import Session

# Sync-only until their async twin lands; each name leaves this list when it does.
# "connect:retention" is `FlowState.connect`'s `retention` parameter (on the async side, await
# `apply_retention` after connecting); "rehearsal" warms up a server's statements, which the
# async front door's servers have no use for yet.
AWAITING_ASYNC_TWINS = frozenset({"connect:retention", "rehearsal"})

# A sync class named in a sync annotation, and its async twin in the async one.
_TWIN_TYPES = {
    "Store": "AsyncStore",
    "Repository": "AsyncRepository",
    "Agent": "AsyncAgent",
    "Session": "AsyncSession",
    "Browse": "AsyncBrowse",
}
_TWIN_NAME = re.compile(r"\b(" + "|".join(_TWIN_TYPES) + r")\b")
_DUNDER_TWINS = {"__enter__": "__aenter__", "__exit__": "__aexit__"}
_PAIRS = [(FlowState, AsyncFlowState), (Session, AsyncSession), (Browse, AsyncBrowse)]


def _public(cls: type) -> dict[str, Any]:
    """Public methods and properties, the constructor and the context-manager methods."""
    names = [n for n in dir(cls) if not n.startswith("_")]
    names += [n for n in ("__init__", *_DUNDER_TWINS.values(), *_DUNDER_TWINS) if n in vars(cls)]
    return {n: inspect.getattr_static(cls, n) for n in names}


def _as_async(annotation: Any) -> Any:
    """A sync annotation (a string: the modules defer them) as its async twin writes it."""
    if isinstance(annotation, str):
        return _TWIN_NAME.sub(lambda m: _TWIN_TYPES[m[1]], annotation)
    return annotation


def _function(member: Any) -> Any:
    return member.__func__ if isinstance(member, classmethod | staticmethod) else member


def _awaiting(name: str) -> set[str]:
    """The parameters of `name` that await their async twin."""
    prefix = f"{name}:"
    return {w.removeprefix(prefix) for w in AWAITING_ASYNC_TWINS if w.startswith(prefix)}


@pytest.mark.parametrize(("sync", "twin"), _PAIRS, ids=lambda c: c.__name__)
def test_every_method_has_an_async_twin_and_nothing_else_is_async_only(
    sync: type, twin: type
) -> None:
    ours = {_DUNDER_TWINS.get(n, n) for n in _public(sync)} - AWAITING_ASYNC_TWINS
    theirs = set(_public(twin))
    assert sorted(ours - theirs) == [], f"{twin.__name__} lacks these twins"
    assert sorted(theirs - ours) == [], f"{twin.__name__} has these methods alone"


def test_the_awaiting_list_names_only_methods_without_a_twin() -> None:
    """An async twin that lands takes its name off the list, so its signature is checked."""
    for name in AWAITING_ASYNC_TWINS:
        method = name.split(":")[0]
        if ":" in name:
            assert (
                name.split(":")[1]
                not in inspect.signature(getattr(AsyncFlowState, method)).parameters
            )
        else:
            assert not hasattr(AsyncFlowState, method), f"{name} has its twin: drop it here"


@pytest.mark.parametrize(("sync", "twin"), _PAIRS, ids=lambda c: c.__name__)
def test_each_twin_takes_the_same_parameters_and_returns_the_async_result(
    sync: type, twin: type
) -> None:
    theirs = _public(twin)
    checked = 0
    for name, member in _public(sync).items():
        twin_name = _DUNDER_TWINS.get(name, name)
        if twin_name not in theirs:
            continue  # awaiting its twin (the test above holds that list)
        other = theirs[twin_name]
        if isinstance(member, property):
            assert isinstance(other, property), name
            continue
        if _function(member) is _function(other):
            continue  # one method, inherited by both (no I/O)
        ours_fn, theirs_fn = _function(member), _function(other)
        assert not inspect.iscoroutinefunction(ours_fn), f"{sync.__name__}.{name} is async"
        if name != "__init__":
            assert inspect.iscoroutinefunction(theirs_fn), f"{twin.__name__}.{twin_name} is sync"
        ours_sig, theirs_sig = inspect.signature(ours_fn), inspect.signature(theirs_fn)
        left_out = _awaiting(name)
        expected = [
            (p.name, p.kind, p.default, _as_async(p.annotation))
            for p in ours_sig.parameters.values()
            if p.name not in left_out
        ]
        actual = [(p.name, p.kind, p.default, p.annotation) for p in theirs_sig.parameters.values()]
        assert actual == expected, f"{twin.__name__}.{twin_name} parameters"
        returned = _as_async(ours_sig.return_annotation)
        assert theirs_sig.return_annotation == returned, f"{twin.__name__}.{twin_name} result"
        checked += 1
    assert checked


def test_the_front_door_twins_are_compared_in_full() -> None:
    """The comparison above sees every verb of the front door, not a few."""
    verbs = set(_public(AsyncFlowState))
    assert {"begin", "resume", "history", "pending", "chosen", "discard", "why"} <= verbs
    assert {"search", "remember", "shown_index", "browse", "namespaces", "agent"} <= verbs
