"""The providers' cache rules (`flowstate_bench.prompt_cache`) and their prices, by hand:
prompts of a known number of tokens, counted apart from FlowState's counter (litellm's copy
of the encoding, tests/litellm_boundary.py)."""

from __future__ import annotations

import pytest

from flowstate.llm.client import Sent
from flowstate_bench import prices
from flowstate_bench.prompt_cache import (
    MIN_CACHED,
    Billed,
    CacheRun,
    automatic_cached,
    bill_calls,
    chat_layout,
)
from tests.litellm_boundary import text_tokens

# A message is billed 3 tokens of framing plus its role ("system" and "user": 1 token each).
FRAMING = 4


def words(n: int) -> str:
    """A text of exactly n tokens (o200k_base: "cat" and each " cat" are one token)."""
    text = "cat" + " cat" * (n - 1)
    assert text_tokens(text, "gpt-4o") == n
    return text


def call(system: str, user: str) -> Sent:
    return Sent([{"role": "system", "content": system}, {"role": "user", "content": user}])


@pytest.mark.parametrize(
    ("shared", "cached"),
    [(0, 0), (1_000, 0), (1_023, 0), (1_024, 1_024), (1_151, 1_024), (1_152, 1_152),
     (1_300, 1_280), (20_000, 19_968)],
)  # fmt: skip
def test_the_automatic_cache_starts_at_1024_tokens_in_steps_of_128(
    shared: int, cached: int
) -> None:
    assert automatic_cached(shared) == cached


@pytest.mark.parametrize(("shared", "cached"), [(1_023, 0), (1_024, 1_024), (1_300, 1_280)])
def test_a_shared_system_message_is_cached_only_from_1024_tokens(shared: int, cached: int) -> None:
    system = words(shared - FRAMING)  # the shared prefix: the system message, framing included
    first, second = bill_calls(
        [(chat_layout(call(system, "alpha")), 0), (chat_layout(call(system, "beta")), 0)]
    )
    assert first.shared == first.cached == 0  # nothing was sent before it
    assert second.shared == shared
    assert second.cached == cached
    assert second.effective_input(0.1) == pytest.approx(second.tokens - 0.9 * cached)


def test_the_cache_reuses_any_earlier_call_not_only_the_previous_one() -> None:
    """Calls of another kind in between (a summariser's) do not evict a prefix."""
    agent, upkeep = words(1_500), "other " * 2_000
    bills = bill_calls(
        [(chat_layout(call(agent, "alpha")), 0), (chat_layout(call(upkeep, "x")), 0),
         (chat_layout(call(agent, "beta")), 0)]
    )  # fmt: skip
    assert bills[1].cached == 0
    assert bills[2].shared == 1_500 + FRAMING and bills[2].cached == 1_408


def test_breakpoints_write_where_the_next_call_extends_the_prompt_and_read_it_later() -> None:
    system = words(1_200 - FRAMING)
    growing = [{"role": "system", "content": system}, {"role": "user", "content": words(300)}]
    first = Sent(growing)
    second = Sent([*growing, {"role": "assistant", "content": "ok"}])
    third = Sent([*second.messages, {"role": "user", "content": "go"}])
    a, b, c = bill_calls([(chat_layout(s), 0) for s in (first, second, third)])
    whole = 1_200 + 300 + FRAMING
    # First call: nothing to read; the second extends it, so its whole prompt is written.
    assert (a.read, a.written) == (0, whole)
    # Second call: the first call's prompt is its prefix, read at 10%; the new message
    # (framing 3 + role 1 + "ok" 1) is written, as the third extends it.
    assert (b.read, b.written) == (whole, 5)
    assert b.breakpoint_input == pytest.approx(0.1 * whole + 1.25 * 5 + (b.tokens - whole - 5))
    # Third call: reads the second's prompt; nothing extends it, so nothing more is written.
    assert (c.read, c.written) == (whole + 5, 0)


def test_a_re_rendered_prompt_writes_only_its_system_part() -> None:
    """Where the next call does not extend a prompt, a breakpoint at its end would only pay
    the write: the system part (1,200 tokens) is written once and read after."""
    system = words(1_200 - FRAMING)
    calls = [call(system, words(300 + n)) for n in range(3)]  # the user part re-rendered
    a, b, c = bill_calls([(chat_layout(s), 0) for s in calls])
    assert (a.read, a.written) == (0, 1_200)
    assert (b.read, b.written) == (c.read, c.written) == (1_200, 0)


def test_a_breakpoint_prefix_below_1024_tokens_is_never_written() -> None:
    small = call(words(900), "alpha")
    bills = bill_calls([(chat_layout(small), 0), (chat_layout(small), 0)])
    assert all(b.read == b.written == 0 for b in bills)
    assert bills[1].breakpoint_input == bills[1].tokens


def test_prices_follow_each_providers_cache_rule() -> None:
    """gpt-4o-mini: cached reads at its cache-read price; claude-sonnet-4-5: writes at 1.25x
    and reads at 10% of its input price (litellm's map)."""
    call_ = Billed(
        tokens=2_000, completion=100, shared=1_300, cached=1_280, read=1_500, written=400
    )
    mini, sonnet = prices.price(prices.SMALL), prices.price(prices.LARGE)
    assert sonnet["cache_write"] == pytest.approx(1.25 * sonnet["input"])
    assert sonnet["cache_read"] == pytest.approx(0.1 * sonnet["input"])
    assert prices.call_cost(prices.SMALL, call_, cached=True) == pytest.approx(
        720 * mini["input"] + 1_280 * mini["cache_read"] + 100 * mini["output"]
    )
    assert prices.call_cost(prices.LARGE, call_, cached=True) == pytest.approx(
        (100 + 0.1 * 1_500 + 1.25 * 400) * sonnet["input"] + 100 * sonnet["output"]
    )
    assert prices.call_cost(prices.LARGE, call_, cached=False) == pytest.approx(
        2_000 * sonnet["input"] + 100 * sonnet["output"]
    )


def test_a_run_bills_each_call_once_in_order() -> None:
    run = CacheRun()
    same = chat_layout(call(words(1_100), "alpha"))
    assert run.bill(same).cached == 0
    assert run.bill(same).cached == MIN_CACHED  # the whole prompt, 1,024 to 1,151 tokens
