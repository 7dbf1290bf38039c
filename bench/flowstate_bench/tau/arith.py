"""`calculate`, as the original answers it, without ever handing a model's text to eval.

The original accepts only the characters `0123456789+-*/(). `, then answers
`str(round(float(eval(expression)), 2))`. Here the text is compiled exactly as eval compiles
it (leading spaces dropped, file name `<string>`), so every syntax error, the parenthesis and
recursion limits of the parser and compiler included, reads the same; nothing is run. The tree
is then evaluated here, without recursion (a sum of thousands of terms is fine), with Python's
own operators, so results and error messages (`division by zero`) are the same.

One departure, where the original would hang or run out of memory: an integer product or power
of more than `MAX_INT_BITS` bits is refused as the float conversion would refuse its result.

>>> calculate("(350 - 122) * 2"), calculate("  12.5  "), calculate("10 ** 400 // 10 ** 399")
('456.0', '12.5', '10.0')
>>> calculate("2 + x")
Traceback (most recent call last):
ValueError: Invalid characters in expression
"""

from __future__ import annotations

import ast
import math
import operator
import warnings
from collections.abc import Callable
from typing import Any

ALLOWED = "0123456789+-*/(). "
# A division of two integers this large takes about a second (it is quadratic), and the
# original computes everything below it: refuse only beyond.
MAX_INT_BITS = 1 << 23

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
    if not isinstance(expression, str):  # a list or dict of allowed characters gets this far
        raise TypeError("eval() arg 1 must be a string, bytes or code object")
    source = expression.lstrip(" \t")  # as eval strips a string before compiling it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "2(3)" warns while compiling; eval's warning is noise
        compile(source, "<string>", "eval")  # the errors eval would raise, nothing run
        tree = ast.parse(source, "<string>", mode="eval")
    return str(round(float(evaluate(tree.body)), 2))


def evaluate(root: ast.expr) -> Any:
    """The value of an expression tree, left operand first as Python evaluates it; an
    explicit stack in place of recursion."""
    values: list[Any] = []
    stack: list[tuple[ast.expr, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        children = _children(node)
        if not ready and children:
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(children))
            continue
        operands = [values.pop() for _ in children][::-1]
        values.append(_apply(node, operands))
    return values[0]


def _children(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.Call):  # "(2)(3)", "(1)(*2)", "(1)(**2)": at most one argument
        args = [a.value if isinstance(a, ast.Starred) else a for a in node.args]
        return [node.func, *args, *(k.value for k in node.keywords)]
    return []


def _apply(node: ast.expr, operands: list[Any]) -> Any:
    if isinstance(node, ast.Constant):  # a number, or `...`
        return node.value
    if isinstance(node, ast.Tuple):  # "()", the only tuple these characters spell
        return ()
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](operands[0])
    if isinstance(node, ast.BinOp):
        left, right = operands
        _check_size(node.op, left, right)
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.Call):
        return _call(node, operands)
    raise ValueError("Invalid characters in expression")


def _call(node: ast.Call, operands: list[Any]) -> Any:
    """Calling a value: none is callable, so Python itself says why the call fails (a
    non-iterable after `*`, a non-mapping after `**`, or the value not being callable)."""
    func, *rest = operands
    if node.keywords:
        return func(**rest[0])
    if node.args and isinstance(node.args[0], ast.Starred):
        return func(*rest[0])
    return func(*rest)


def _check_size(op: ast.operator, left: Any, right: Any) -> None:
    """Refuse, as float() would refuse the result, an integer product or power too large to
    compute in reasonable time and memory."""
    if not (type(left) is int and type(right) is int):
        return
    if isinstance(op, ast.Mult):
        bits = left.bit_length() + right.bit_length()
    elif isinstance(op, ast.Pow) and right > 0 and abs(left) > 1:
        bits = int(right * math.log2(abs(left)))
    else:
        return
    if bits > MAX_INT_BITS:
        raise OverflowError("int too large to convert to float")
