"""What every domain environment shares: its view of the database (a shared snapshot plus its
own copies of what it changed), tool dispatch as the original's, a log of the calls, and the
database hash.

A call reaches the tool with its arguments exactly as the agent gave them: no validation, no
coercion, as in the original, whose tools check what they check and let Python refuse the
rest. Every failure answers `Error: <message>` (a wrong argument name reads as Python's own
`AirlineTools.get_user_details() got an unexpected keyword argument 'x'`); every success is
the original's rendering (a string as is, anything else as `json.dumps` with its default
separators). That is what makes our outputs byte-identical to a run of the original.

Write tools are deliberately NOT marked consequential: tau-bench has no approver, and the
policy's "get an explicit yes first" is the agent's job, judged by the benchmark, not a gate
the harness enforces. Likewise a policy rule the API does not enforce is not enforced here.
"""

from __future__ import annotations

import copy
import inspect
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from flowstate.engine.tools import Tool, ToolResult
from flowstate_bench.tau import arith
from flowstate_bench.tau.data import Snapshot, Task, canonical_json

if TYPE_CHECKING:
    pass

TRANSFER_MESSAGE = "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."

_TEMPLATES: dict[type, list[Tool]] = {}  # tool descriptions per environment class


class ToolError(ValueError):
    """A call the domain refuses (the original's tools raise ValueError)."""


@dataclass(frozen=True)
class ToolCallRecord:
    """A call of one of the environment's tools, and its error text if it failed."""

    name: str
    arguments: dict[str, Any]
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class EnvOptions:
    """Departures from the original, all off by default so results stay comparable.

    `fix_multi_item_modify`: in `modify_pending_order_items` each changed item takes its own
    new item's price and options; the original gives every item those of the LAST new item.
    """

    fix_multi_item_modify: bool = False


@dataclass(frozen=True)
class EnvTool(Tool):
    """A tool whose arguments go to the environment untouched (the schema still describes
    them to the model): the environment, not a validator, decides what a call does."""

    def call(self, arguments: dict[str, Any]) -> ToolResult:
        return self.fn(arguments)

    def invalid(self, arguments: dict[str, Any]) -> str | None:
        return None  # the environment answers every call, as the original's does


class Environment:
    """Base of the domain environments. Subclasses list their tool methods in `TOOLS`."""

    domain: ClassVar[str] = ""
    TOOLKIT: ClassVar[str] = ""  # the original's toolkit class, as Python's errors name it
    TOOLS: ClassVar[tuple[str, ...]] = ()
    WRITE_TOOLS: ClassVar[frozenset[str]] = frozenset()

    def __init__(
        self, source: Snapshot | dict[str, Any], options: EnvOptions | None = None
    ) -> None:
        """Over a shared `Snapshot` (or a plain database, wrapped in one). Tables are this
        environment's own shallow copies; a record is copied by `edit` before it changes, so
        the snapshot is never written to."""
        self.snapshot = source if isinstance(source, Snapshot) else Snapshot(source)
        self.options = options or EnvOptions()
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

    def add(self, table: str, key: str, record: dict[str, Any]) -> None:
        self.db[table][key] = record
        self._edited.add((table, key))

    # -- tools ------------------------------------------------------------------------------

    def tools(self) -> list[Tool]:
        return list(self._tools.values())

    def call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Run one tool as the original would, arguments as given; the call is logged."""
        if name not in self.TOOLS:
            return ToolResult(f"Error: Tool '{name}' not found.", is_error=True)
        kwargs = dict(arguments)
        try:
            _dispatch_names(kwargs)
            _bind(f"{self.TOOLKIT}.{name}", getattr(self, name), kwargs)
            value = getattr(self, name)(**kwargs)
        except Exception as e:  # the original answers every failure so
            result = ToolResult(f"Error: {e}", is_error=True)
        else:
            result = ToolResult(render(value), is_error=False)
        self.calls.append(ToolCallRecord(name, kwargs, result.output if result.is_error else None))
        return result

    def _build_tools(self) -> list[Tool]:
        # Building the schema models costs more than a whole read-only conversation; they
        # depend only on the class, so they are built once per class and re-bound here.
        cls = type(self)
        if cls not in _TEMPLATES:
            _TEMPLATES[cls] = [Tool.from_function(getattr(self, n)) for n in self.TOOLS]
        return [
            EnvTool(t.name, t.description, self._caller(t.name), t.params) for t in _TEMPLATES[cls]
        ]

    def _caller(self, name: str) -> Callable[[dict[str, Any]], ToolResult]:
        return lambda arguments: self.call(name, arguments)

    # -- state ------------------------------------------------------------------------------

    def hash(self) -> str:
        """`db_hash(self.db)`; cheap while nothing changed, and only changes re-encoded."""
        untouched = not self._edited and all(
            len(rows) == len(self.snapshot.db[t]) for t, rows in self.db.items()
        )
        return self.snapshot.hash if untouched else self.snapshot.hash_of(self.db)

    def changed(self) -> dict[str, dict[str, Any]]:
        """The records that differ from the snapshot (new ones included), per table."""
        found: dict[str, dict[str, Any]] = {}
        for table, key in sorted(self._edited):
            record = self.db[table][key]
            before = self.snapshot.db[table].get(key)
            if before is None or canonical_json(before) != canonical_json(record):
                found.setdefault(table, {})[key] = record
        return found

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
        return arith.calculate(expression)

    def transfer_to_human_agents(self, summary: str) -> str:
        """Transfer the user to a human agent, with a summary of their issue. Only when the
        user asks for one, or the request cannot be handled within the scope of your
        actions."""
        return "Transfer successful"


def render(value: Any) -> str:
    """The original's tool output: a string as is, anything else as default `json.dumps`."""
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _dispatch_names(kwargs: Mapping[str, Any]) -> None:
    """The original's dispatcher takes the tool's name and the requestor beside the tool's
    arguments (`self.make_tool_call(tool_name, requestor=..., **kwargs)`): an argument named
    `requestor` collides at that call, then the first one named `self` or `tool_name` as the
    method's parameters are bound, each in Python's words."""
    if "requestor" in kwargs:
        raise TypeError(
            "tau2.environment.environment.Environment.make_tool_call() got multiple values "
            "for keyword argument 'requestor'"
        )
    for name in kwargs:
        if name in ("self", "tool_name"):
            raise TypeError(
                f"Environment.make_tool_call() got multiple values for argument '{name}'"
            )


def _bind(qualname: str, fn: Callable[..., Any], kwargs: Mapping[str, Any]) -> None:
    """Refuse keyword arguments exactly as Python refuses them calling the original's tool:
    the first unknown name, else every missing one, in Python's own words."""
    params = inspect.signature(fn).parameters
    for key in kwargs:
        if key not in params:
            raise TypeError(f"{qualname}() got an unexpected keyword argument '{key}'")
    missing = [f"'{n}'" for n, p in params.items() if p.default is p.empty and n not in kwargs]
    if missing:
        if len(missing) == 1:
            names = missing[0]
        elif len(missing) == 2:
            names = " and ".join(missing)
        else:
            names = ", ".join(missing[:-1]) + ", and " + missing[-1]
        plural = "s" if len(missing) > 1 else ""
        raise TypeError(
            f"{qualname}() missing {len(missing)} required positional argument{plural}: {names}"
        )


def _merge(into: dict[str, Any], extra: Mapping[str, Any]) -> None:
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value
