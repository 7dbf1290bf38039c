"""`calculate` against the original tau2-bench's answers to a seeded corpus of edge calls.

`fixtures/tau_calculate/recorded.jsonl` holds, per call of `calc_corpus.calls()`, what the
original's `Environment.get_response` answered (content and error flag), run on Python 3.11;
`output_py312` is its answer on 3.12 where that differs (the parser's stack-overflow message).
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from calc_corpus import calls

from flowstate_bench.tau import arith
from flowstate_bench.tau.airline import AirlineEnv
from flowstate_bench.tau.env import Environment
from flowstate_bench.tau.retail import RetailEnv

RECORDED = Path(__file__).parent.parent / "fixtures" / "tau_calculate" / "recorded.jsonl"
DOMAINS = {"airline": AirlineEnv, "retail": RetailEnv}


def _recorded() -> list[dict[str, Any]]:
    return [json.loads(line) for line in RECORDED.read_text(encoding="utf-8").splitlines()]


def _expected(row: dict[str, Any]) -> str:
    return row.get("output_py312", row["output"]) if sys.version_info >= (3, 12) else row["output"]


def _env(domain: str) -> Environment:
    """`calculate` reads no table: an empty database will do (the class still names the
    toolkit in Python's argument errors)."""
    return DOMAINS[domain]({})


def test_the_recording_holds_the_corpus_in_order() -> None:
    recorded = _recorded()
    corpus = list(calls())
    assert len(recorded) == len(corpus) > 3000
    assert [{"domain": r["domain"], "arguments": r["arguments"]} for r in recorded] == corpus


def test_every_recorded_call_answers_as_the_original() -> None:
    envs = {domain: _env(domain) for domain in DOMAINS}
    mismatches = []
    for n, row in enumerate(_recorded()):
        got = envs[row["domain"]].call("calculate", row["arguments"])
        if (got.output, got.is_error) != (_expected(row), row["error"]):
            mismatches.append((n, row["arguments"], got.output[:200], _expected(row)[:200]))
    assert mismatches[:10] == []


def test_the_corpus_reaches_every_kind_of_answer() -> None:
    outputs = [_expected(r) for r in _recorded()]
    for fragment in (
        "Invalid characters",
        "division by zero",
        "int too large to convert to float",
        "maximum recursion depth exceeded during compilation",
        "too many nested parentheses",
        "Exceeds the limit (4300 digits)",
        "eval() arg 1 must be a string",
        "is not iterable",
        "got multiple values for argument 'self'",
        "got an unexpected keyword argument",
        "missing 1 required positional argument",
    ):
        assert any(fragment in o for o in outputs), fragment
    assert sum(not r["error"] for r in _recorded()) > 1000


@pytest.mark.parametrize(
    ("expression", "answer"),
    [
        ("  12.5  ", "12.5"),
        ("+".join(["1"] * 1201), "1201.0"),
        ("10 ** 400 // 10 ** 399", "10.0"),
        # large integers the original computes in well under a second
        ("2 ** 1048577 // 2 ** 1048576", "2.0"),
        ("(-2) ** 1048577 // 2 ** 1048576", "-2.0"),
        ("2 ** 1048577 - 2 ** 1048577", "0.0"),
        ("3 ** 700000 // 3 ** 699999", "3.0"),
    ],
)
def test_what_the_original_computes_is_computed(expression: str, answer: str) -> None:
    assert arith.calculate(expression) == answer


def _small(value: int) -> int:
    """An operand as given, or a big one as minus its size in bits (for a readable failure)."""
    return value if value.bit_length() < 64 else -value.bit_length()


@pytest.mark.parametrize(
    ("expression", "computed"),
    [
        ("9**9**9**9", [("**", 9, 9)]),  # 9**387420489 is refused, not computed
        ("2**(2**24)", [("**", 2, 24)]),
        ("(2**8000000)*(2**8000000)", [("**", 2, 8000000), ("**", 2, 8000000)]),
    ],
)
def test_a_product_or_power_beyond_the_guard_is_refused_before_it_is_computed(
    expression: str, computed: list[tuple[str, int, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Held by what is computed, not by the clock: without the guard the same OverflowError
    comes from float() after the work (in a fraction of a second for the last two)."""
    done: list[tuple[str, int, int]] = []
    for node, sign in ((ast.Mult, "*"), (ast.Pow, "**")):
        real = arith._BINARY[node]

        def recorded(a: Any, b: Any, real: Any = real, sign: str = sign) -> Any:
            done.append((sign, _small(a), _small(b)))
            return real(a, b)

        monkeypatch.setitem(arith._BINARY, node, recorded)
    with pytest.raises(OverflowError, match="int too large to convert to float"):
        arith.calculate(expression)
    assert done == computed


def test_just_under_the_guard_still_computes() -> None:
    bits = arith.MAX_INT_BITS - 8
    assert arith.calculate(f"2**{bits} // 2**{bits - 3}") == "8.0"
