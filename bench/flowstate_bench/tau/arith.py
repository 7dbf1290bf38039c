"""`calculate`, as the original answers it, without ever handing a model's text to eval.

The original accepts only the characters `0123456789+-*/(). `, evaluates the expression as
Python would and answers `str(round(float(value), 2))`. Here the expression is parsed (with the
same file name, so a syntax error reads the same), and only what those characters can spell is
evaluated: numbers, + - * / // ** and parentheses; the operators are Python's own, so results
and error messages (`division by zero`) are the same.

>>> calculate("(350 - 122) * 2"), calculate("2 ** 8"), calculate("10 / 3")
('456.0', '256.0', '3.33')
>>> calculate("2 + x")
Traceback (most recent call last):
ValueError: Invalid characters in expression
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

ALLOWED = "0123456789+-*/(). "
# Beyond this many bits an integer power cannot become a float: answer as float() would.
MAX_POWER_BITS = 1100

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def calculate(expression: Any) -> str:
    if not all(char in ALLOWED for char in expression):
        raise ValueError("Invalid characters in expression")
    tree = compile(expression, "<string>", "eval", ast.PyCF_ONLY_AST)
    return str(round(float(_value(tree.body)), 2))


def _value(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_value(node.operand))
    if isinstance(node, ast.BinOp):
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Pow):
            _check_power(left, right)
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.Tuple):  # "()" is an empty tuple, which float() refuses
        return tuple(_value(e) for e in node.elts)
    if isinstance(node, ast.Call):  # "2(3)": Python calls the number
        raise TypeError(f"'{type(_value(node.func)).__name__}' object is not callable")
    raise ValueError("Invalid characters in expression")


def _check_power(base: Any, exponent: Any) -> None:
    """Refuse, as float() would afterwards, an integer power too large to compute safely."""
    if not (isinstance(base, int) and isinstance(exponent, int)):
        return
    if exponent > 0 and abs(base) > 1 and exponent * math.log2(abs(base)) > MAX_POWER_BITS:
        raise OverflowError("int too large to convert to float")
