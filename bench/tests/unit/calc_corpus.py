"""The seeded corpus of `calculate` calls that `fixtures/tau_calculate/recorded.jsonl` records the
original tau2-bench's answers to: edge values a model might send (whitespace, long sums, deep
parentheses, huge integers, floats, division by zero, unary chains, invalid characters, empty
text, non-string arguments) and argument names its dispatcher refuses.

`calls()` is deterministic: the recording holds its calls in order, and the test checks that
the two still agree before comparing answers.

Sizes keep clear of the compiler's recursion limit (about 3,000 nested operations, less the
caller's stack depth): there the original's own answer depends on how deep it was called.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

SEED = 20_260_518
DOMAINS = ("airline", "retail")
OPS = ("+", "-", "*", "/", "//", "**")

FIXED = [
    "  12.5  ",
    " 1+1",
    "1+1 ",
    "   ",
    "",
    " ",
    "()",
    "( )",
    "(1)(2)",
    "2(3)",
    "()()",
    "(1)(*2)",
    "(1)(*())",
    "(1)(**2)",
    "(1)(**())",
    "(1)(1/0)",
    "(1/0)(1)",
    "(1)(**(1/0))",
    "(...)(1)",
    "...",
    ". . .",
    "1 2",
    "1 .1",
    "1..2",
    "1.2.3",
    "..",
    ".",
    "5.",
    ".5",
    "0.",
    "01",
    "00",
    "0",
    "007",
    "1 / 0",
    "1//0",
    "1.0/0",
    "0**-1",
    "0.0**-1",
    "(1-1)/(2-2)",
    "10 ** 400 // 10 ** 399",
    "2**1024*1.0",
    "2**1024/2",
    "2**1024//2",
    "(2**1024)/(2**1023)",
    "2.0**10000",
    "10.0**308*10",
    "-10.0**308*10",
    "10**-400",
    "(-8)**0.5",
    "(-2)**0.5",
    "2**0.5**2",
    "-2**2",
    "(-2)**2",
    "--1",
    "+-+1",
    "- - - 1",
    "-(-(1))",
    "+()",
    "()**2",
    "()*3",
    "()+()",
    "()*1.5",
    "()*(10**20)",
    "1+",
    "*",
    "**",
    "//",
    "/ 1",
    "(",
    ")",
    "(()",
    "())",
    "*1",
    "(*())",
    "2.675",
    "1.005*1",
    "0.125",
    "0.375",
    "2.5",
    "-0.001",
    "-0.0",
    "0.1+0.2",
    "1/3",
    "2/3",
    "350 - 122",
    "(350 - 122) * 2",
    "100 * 0.15",
    "1234.5678 * 1",
    "99999999999999999999",
    "1" * 4300,
    "1" * 4301,
    "9" * 5000 + "-1",
    "2**100000//2**99999",
    "12+a",
    "1,000",
    "1e5",
    "1_000",
    "3^2",
    "5%2",
    "1=1",
    "\t1",
    "1\n",
    "\n",
    "1;2",
    "__import__('os')",
    "abs(-1)",
    "١+١",
    "1\u00a0+1",
    "½",
    "[1]",
    "{}",
    "'1'",
    "1 + 2 # x",
]


def _number(rnd: random.Random) -> str:
    kind = rnd.random()
    if kind < 0.45:
        return str(rnd.randint(0, 999))
    if kind < 0.75:
        return f"{rnd.uniform(0, 1000):.{rnd.randint(0, 4)}f}"
    if kind < 0.85:
        return str(rnd.randint(0, 9)) + "." if rnd.random() < 0.5 else "." + str(rnd.randint(0, 99))
    if kind < 0.95:
        return str(rnd.randint(10**15, 10**25))
    return "0"


def _expression(rnd: random.Random, depth: int) -> str:
    if depth <= 0 or rnd.random() < 0.3:
        text = _number(rnd)
    else:
        op = rnd.choice(OPS[:5] if rnd.random() < 0.9 else OPS)
        left, right = _expression(rnd, depth - 1), _expression(rnd, depth - 1)
        if op == "**":
            right = str(rnd.randint(-3, 4))  # nested powers stay small
        gap = " " if rnd.random() < 0.5 else ""
        text = f"{left}{gap}{op}{gap}{right}"
    if rnd.random() < 0.25:
        text = f"({text})"
    if rnd.random() < 0.1:
        text = rnd.choice("-+") + text
    return text


def _spaced(rnd: random.Random, text: str) -> str:
    return " " * rnd.randint(0, 4) + text + " " * rnd.randint(0, 4)


def _long(rnd: random.Random) -> str:
    """Long sums, nested parentheses and unary chains, inside and beyond the parser's limits."""
    kind = rnd.randrange(4)
    if kind == 0:  # a sum: fine up to ~2,900 terms; 4,000 on fails in the compiler
        n = rnd.choice((rnd.randint(2, 2200), rnd.randint(4000, 9000)))
        term = rnd.choice(("1", "0.5", "3", "10"))
        return rnd.choice(("+", " + ", "-", "*1+")).join([term] * n)
    if kind == 1:  # parentheses: 200 levels are the tokenizer's limit
        n = rnd.choice((rnd.randint(1, 200), rnd.randint(201, 1500)))
        return "(" * n + _number(rnd) + ")" * n
    if kind == 2:  # a unary chain: the parser gives up near 6,000
        n = rnd.choice((rnd.randint(1, 2200), rnd.randint(6500, 9000)))
        return "".join(rnd.choice("-+") for _ in range(n)) + _number(rnd)
    n = rnd.randint(1, 150)  # a sum nested in parentheses
    return "(" * n + "+".join(["1"] * rnd.randint(1, 50)) + ")" * n


def _huge(rnd: random.Random) -> str:
    """Integers far past a float's range, staying within what computes in milliseconds."""
    a, b = rnd.randint(2, 99), rnd.randint(100, 20_000)
    shapes = (
        f"{a} ** {b}",
        f"{a} ** {b} // {a} ** {b - rnd.randint(0, 5)}",
        f"{a} ** {b} / {a} ** {b - rnd.randint(0, 300)}",
        f"{a}**{b} - {a}**{b} + {rnd.randint(0, 9)}",
        f"-{a}**{b}",
        f"({a}**{b})*0.5",
        f"{a}**{b}*{a}**{b}//{a}**{2 * b - 1}",
        f"2**{rnd.randint(1000, 1100)}",
        f"1.0001**{rnd.randint(10**5, 10**7)}",
        f"{a} ** -{b}",
        str(rnd.randint(1, 9)) * rnd.randint(300, 4300),
        f"{rnd.randint(0, 9)}" * rnd.randint(4301, 6000),
    )
    return rnd.choice(shapes)


def _invalid(rnd: random.Random) -> str:
    bad = rnd.choice("abcxyzE%^,=;:[]{}'\"!&|<>~@#$\\\t\n\u00a0\u0661²π")
    text = _expression(rnd, 2)
    at = rnd.randint(0, len(text))
    return text[:at] + bad + text[at:]


def _non_string(rnd: random.Random) -> Any:
    return rnd.choice(
        (
            rnd.randint(-100, 100),
            rnd.uniform(-10, 10),
            None,
            True,
            False,
            [],
            {},
            ["1", "+", "2"],
            ["12"],
            ["13"],
            [1, 2],
            {"1": 1},
            {"a": 1},
            [["1"]],
            "",
        )
    )


# Openings glued to random expressions; none with a power, whose exponent could be anything.
PREFIXES = [text for text in FIXED if "**" not in text]

NAMES = [
    {},
    {"expr": "1+1"},
    {"expression": "1+1", "extra": 2},
    {"self": "1+1"},
    {"self": 1, "expression": "1+1"},
    {"expression": "1+1", "self": 1},
    {"tool_name": "calculate"},
    {"expression": "1", "tool_name": "x"},
    {"tool_name": "x", "self": 1},
    {"self": 1, "tool_name": "x"},
    {"requestor": "user"},
    {"requestor": "assistant", "expression": "1"},
    {"self": 1, "requestor": "user"},
    {"expression": "2+2", "kwargs": 1},
    {"expression": "1+1", "message": "x"},
    {"Expression": "1+1"},
    {"expression ": "1+1"},
]


def calls() -> Iterator[dict[str, Any]]:
    """Every call as `{"domain", "arguments"}`, in the recording's order."""
    rnd = random.Random(SEED)
    for text in FIXED:
        for domain in DOMAINS:
            yield {"domain": domain, "arguments": {"expression": text}}
    for arguments in NAMES:
        for domain in DOMAINS:
            yield {"domain": domain, "arguments": arguments}
    makers = (
        (0.35, lambda: _expression(rnd, rnd.randint(1, 6))),
        (0.10, lambda: _spaced(rnd, _expression(rnd, rnd.randint(0, 3)))),
        (0.12, lambda: _long(rnd)),
        (0.12, lambda: _huge(rnd)),
        (0.10, lambda: _invalid(rnd)),
        (0.06, lambda: _non_string(rnd)),
        (0.15, lambda: rnd.choice(PREFIXES)[: rnd.randint(0, 6)] + _expression(rnd, 2)),
    )
    weights, makes = [w for w, _ in makers], [m for _, m in makers]
    for _ in range(3000):
        make = rnd.choices(makes, weights)[0]
        yield {"domain": rnd.choice(DOMAINS), "arguments": {"expression": make()}}
