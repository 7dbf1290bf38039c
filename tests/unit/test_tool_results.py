"""Whatever a tool returns or raises becomes a bounded observation of valid Unicode."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from flowstate.engine.tools import MAX_OUTPUT_CHARS, Tool
from flowstate.errors import UsageError


def _deep(depth: int, make: Any) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = make(value)
    return value


RESULTS = {
    "lone surrogate": "caf\udce9 (surrogateescape)",
    "lone surrogate in a dict": {"name": "caf\udce9", "\udcffkey": 1},
    "list 3,000 deep": _deep(3_000, lambda v: [v]),
    "dict 3,000 deep": _deep(3_000, lambda v: {"k": v}),
    "tuple 3,000 deep": _deep(3_000, lambda v: (v,)),
    "300k characters": "z" * 300_000,
    "a set (not JSON)": {1, 2, 3},
}


@pytest.mark.parametrize("name", list(RESULTS))
def test_hostile_results_become_bounded_valid_observations(name: str) -> None:
    def hostile() -> Any:
        """Returns something hostile."""
        return RESULTS[name]

    result = Tool.from_function(hostile).call({})
    assert not result.is_error
    result.output.encode("utf-8")  # valid Unicode: a draft and a commit can hold it
    assert len(result.output) <= MAX_OUTPUT_CHARS + 100


def test_a_lone_surrogate_is_shown_escaped() -> None:
    def tool() -> str:
        """Returns undecodable bytes as surrogateescape leaves them."""
        return b"caf\xe9".decode("utf-8", "surrogateescape")

    assert Tool.from_function(tool).call({}).output == "caf\\udce9"


def test_a_deep_result_is_cut_with_a_marker() -> None:
    def tool() -> Any:
        """Deep."""
        return RESULTS["list 3,000 deep"]

    output = Tool.from_function(tool).call({}).output
    assert output.startswith("[" * 64) and "nested deeper than 64 levels: not shown" in output


@pytest.mark.parametrize(
    "error",
    [
        ValueError("e" * 250_000),
        RuntimeError("bad \udcff byte"),
        RecursionError("maximum recursion depth exceeded"),
    ],
)
def test_exceptions_become_bounded_error_observations(error: Exception) -> None:
    def failing() -> str:
        """Fails."""
        raise error

    result = Tool.from_function(failing).call({})
    assert result.is_error and result.output.startswith(type(error).__name__)
    result.output.encode("utf-8")
    assert len(result.output) <= MAX_OUTPUT_CHARS + 100


def test_an_exception_whose_message_cannot_be_read_is_still_reported() -> None:
    class Weird(Exception):
        def __str__(self) -> str:
            raise TypeError("no message")

    def failing() -> str:
        """Fails oddly."""
        raise Weird

    assert Tool.from_function(failing).call({}).output == "Weird (its message could not be read)"


def test_a_huge_argument_name_is_not_echoed_in_full() -> None:
    def lookup(city: str) -> str:
        """Look up."""
        return city

    result = Tool.from_function(lookup).call({"city": "Porto", "n" * 300_000: 1})
    assert result.is_error and len(result.output) < 300
    assert "(300,000 characters): Extra inputs are not permitted" in result.output


def test_an_async_tool_is_awaited_by_acall_and_refused_by_call() -> None:
    async def fetch(city: str) -> str:
        """Fetch."""
        await asyncio.sleep(0)
        return f"{city}: ok"

    tool = Tool.from_function(fetch)
    assert tool.is_async
    assert asyncio.run(tool.acall({"city": "Porto"})).output == "Porto: ok"
    refused = tool.call({"city": "Porto"})
    assert refused.is_error and "async tools need `await agent.arun(...)`" in refused.output


def test_a_tool_name_longer_than_providers_accept_is_refused_up_front() -> None:
    def fn() -> str:
        """Any."""
        return ""

    with pytest.raises(UsageError, match="at most 64"):
        Tool.from_function(fn, name="t" * 65)
    assert Tool.from_function(fn, name="t" * 64).name == "t" * 64
