"""What every domain environment shares: its view of the database (a shared snapshot plus its
own copies of what it changed), tools built from typed methods, a log of the calls that
reached them, and the database hash.

Write tools are deliberately NOT marked consequential: tau-bench has no approver, and the
policy's "get an explicit yes first" is the agent's job, judged by the benchmark, not a gate
the harness enforces.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

from flowstate.engine.tools import Tool, ToolResult
from flowstate.errors import UsageError
from flowstate_bench.tau.data import Snapshot, Task

if TYPE_CHECKING:
    from flowstate_bench.tau.data import TauData

TRANSFER_MESSAGE = "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."

_TEMPLATES: dict[type, list[Tool]] = {}  # tools per environment class, before binding


class ToolError(Exception):
    """A call the domain refuses: unknown id, or a rule of the policy that the API enforces."""


@dataclass(frozen=True)
class ToolCallRecord:
    """A call that passed argument validation and reached the environment."""

    name: str
    arguments: dict[str, Any]
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class Environment:
    """Base of the domain environments. Subclasses list their tool methods in `TOOLS`."""

    domain: ClassVar[str] = ""
    TOOLS: ClassVar[tuple[str, ...]] = ()
    WRITE_TOOLS: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, source: Snapshot | dict[str, Any]) -> None:
        """Over a shared `Snapshot` (or a plain database, wrapped in one). Tables are this
        environment's own shallow copies; a record is copied by `edit` before it changes, so
        the snapshot is never written to."""
        self.snapshot = source if isinstance(source, Snapshot) else Snapshot(source)
        self.db = {k: dict(v) if isinstance(v, dict) else v for k, v in self.snapshot.db.items()}
        self.calls: list[ToolCallRecord] = []
        self._edited: set[tuple[str, str]] = set()
        self._tools = {t.name: t for t in self._build_tools()}

    def edit(self, table: str, key: str) -> dict[str, Any]:
        """The record as this environment's own copy: write tools change records only so."""
        if (table, key) not in self._edited:
            self.db[table][key] = copy.deepcopy(self.db[table][key])
            self._edited.add((table, key))
        return self.db[table][key]

    # -- tools ------------------------------------------------------------------------------

    def tools(self) -> list[Tool]:
        return list(self._tools.values())

    def call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Run one tool exactly as an agent's call would run (same validation, same log)."""
        tool = self._tools.get(name)
        if tool is None:
            return ToolResult(f"unknown tool {name!r}", is_error=True)
        return tool.call(dict(arguments))

    def _build_tools(self) -> list[Tool]:
        # Building the argument models costs more than a whole read-only conversation; they
        # depend only on the class, so they are built once per class and re-bound here.
        cls = type(self)
        if cls not in _TEMPLATES:
            _TEMPLATES[cls] = [Tool.from_function(getattr(self, n)) for n in self.TOOLS]
        return [
            replace(t, fn=self._recorded(t.name, getattr(self, t.name))) for t in _TEMPLATES[cls]
        ]

    def _recorded(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(**kwargs: Any) -> Any:
            try:
                value = fn(**kwargs)
            except Exception as e:
                self.calls.append(ToolCallRecord(name, kwargs, f"{type(e).__name__}: {e}"))
                raise
            self.calls.append(ToolCallRecord(name, kwargs))
            return value

        return run

    # -- state ------------------------------------------------------------------------------

    def hash(self) -> str:
        """`db_hash(self.db)`; cheap while nothing changed, and only changes re-encoded."""
        untouched = not self._edited and all(
            len(rows) == len(self.snapshot.db[t]) for t, rows in self.db.items()
        )
        return self.snapshot.hash if untouched else self.snapshot.hash_of(self.db)

    def apply_initial_state(self, task: Task) -> None:
        """tau2's initial state: data merged into the database, then set-up calls. None of it
        counts as the agent's calls."""
        state = task.initial_state
        if state:  # only the mock domain has one, and its database is tiny: copy it all
            self.db = copy.deepcopy(self.db)
            self._edited.update((t, k) for t, rows in self.db.items() for k in rows)
        agent_data = (state.get("initialization_data") or {}).get("agent_data")
        if agent_data:
            _merge(self.db, agent_data)
        setup = [
            (a["func_name"], a.get("arguments") or {})
            for a in state.get("initialization_actions") or []
            if a.get("env_type", "assistant") == "assistant"
        ]
        setup += [
            (c["name"], c.get("arguments") or {})
            for m in state.get("message_history") or []
            if m.get("role") == "assistant"
            for c in m.get("tool_calls") or []
        ]
        for name, arguments in setup:
            self.call(name, arguments)
        self.calls.clear()

    def check_assertion(self, assertion: Mapping[str, Any]) -> bool | None:
        """An env assertion's verdict, or None when this environment cannot judge it."""
        if assertion.get("env_type", "assistant") != "assistant":
            return None
        name = str(assertion.get("func_name"))
        check = getattr(self, name, None) if name.startswith("assert_") else None
        if not callable(check):
            return None
        verdict = bool(check(**(assertion.get("arguments") or {})))
        return verdict == assertion.get("assert_value", True)

    # -- tools every domain has -------------------------------------------------------------

    def calculate(self, expression: str) -> str:
        """Calculate an arithmetic expression (numbers, + - * / and parentheses), rounded to
        2 decimals. Example: "(350 - 122) * 2"."""
        return str(round(safe_eval(expression), 2))

    def transfer_to_human_agents(self, summary: str) -> str:
        """Transfer the user to a human agent, with a summary of their issue. Only when the
        request cannot be handled within the scope of your actions."""
        return "Transfer successful"


def _merge(into: dict[str, Any], extra: Mapping[str, Any]) -> None:
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


_OPS: dict[type, Callable[..., float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def safe_eval(expression: str) -> float:
    """Arithmetic only: a model's expression must never reach Python's eval."""
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError as e:
        raise ToolError(f"not an arithmetic expression: {expression!r}") from e

    def value(node: ast.AST) -> float:
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            try:
                return _OPS[type(node.op)](value(node.left), value(node.right))
            except ZeroDivisionError as e:
                raise ToolError("division by zero") from e
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](value(node.operand))
        raise ToolError(f"only numbers, + - * / and parentheses are allowed: {expression!r}")

    return value(tree.body)


def stable_id(prefix: str, *parts: object, digits: int = 7) -> str:
    """An id derived from the state it is created in, so a replay creates the same one."""
    seed = "|".join(str(p) for p in parts).encode()
    number = int(hashlib.sha256(seed).hexdigest(), 16) % 10**digits
    return f"{prefix}{number:0{digits}d}"


def stable_code(*parts: object, length: int = 6) -> str:
    """Like `stable_id`, as upper-case letters and digits (a reservation code)."""
    number = int(hashlib.sha256("|".join(str(p) for p in parts).encode()).hexdigest(), 16)
    return "".join(_ALNUM[(number >> (6 * i)) % len(_ALNUM)] for i in range(length))


_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def make_env(domain: str, data: TauData, task: Task | None = None) -> Environment:
    """A fresh environment of `domain` over its own copy of the database, with the task's
    initial state applied when a task is given."""
    from flowstate_bench.tau.airline import AirlineEnv
    from flowstate_bench.tau.mock import MockEnv
    from flowstate_bench.tau.retail import RetailEnv

    kinds: dict[str, type[Environment]] = {
        "airline": AirlineEnv,
        "retail": RetailEnv,
        "mock": MockEnv,
    }
    if domain not in kinds:
        raise UsageError(f"unknown domain {domain!r}; one of {', '.join(kinds)}")
    env = kinds[domain](data.snapshot(domain))
    if task is not None:
        env.apply_initial_state(task)
    return env
