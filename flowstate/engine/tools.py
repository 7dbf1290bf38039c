"""Tools: plain Python callables with typed parameters.

The JSON schema comes from the signature (or from a pydantic model taken as the only
parameter); arguments are validated before the call, and any exception becomes an
observation the model reads, never a crash of the loop. Whatever a tool returns or raises, the
observation is bounded (MAX_OUTPUT_CHARS, results nested at most MAX_RESULT_DEPTH deep) and
valid Unicode (a lone surrogate, as `surrogateescape` decoding leaves, is shown escaped).
`async def` tools are awaited by `AsyncAgent.arun`; `Agent.run` refuses them.

>>> def find_hotels(city: str, max_price: int = 200) -> list[str]:
...     '''Hotels in a city under a nightly price.'''
...     return ["Casa Azul"]
>>> Tool.from_function(find_hotels).schema()["function"]["parameters"]["required"]
['city']
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from flowstate.errors import UsageError
from flowstate.models.step import nesting_depth

MAX_OUTPUT_CHARS = 20_000
MAX_TOOL_NAME_CHARS = 64
MAX_RESULT_DEPTH = 64  # deeper parts of a result are replaced by a marker
MAX_ERROR_NAME_CHARS = 64  # an argument name quoted in an "invalid arguments" message


class _AnyArguments(BaseModel):
    model_config = ConfigDict(extra="allow")


@dataclass(frozen=True)
class ToolResult:
    output: str
    is_error: bool


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    fn: Callable[..., Any]
    params: type[BaseModel]
    # Consequential tools (book, pay, cancel) need cited states and an approval before running.
    consequential: bool = False
    _takes_model: bool = field(default=False, repr=False)

    @classmethod
    def from_function(
        cls, fn: Callable[..., Any], *, name: str | None = None, consequential: bool = False
    ) -> Tool:
        name = name or fn.__name__
        if not name.replace("_", "").isalnum():
            raise UsageError(f"tool name {name!r} must be letters, digits and _")
        if len(name) > MAX_TOOL_NAME_CHARS:  # providers' limit; observations keep the name
            raise UsageError(f"tool name {name[:20]!r}... has {len(name)} characters; at most 64")
        params, takes_model = _parameters_model(fn, name)
        doc = inspect.getdoc(fn) or name.replace("_", " ")
        return cls(name, doc, fn, params, consequential, takes_model)

    @classmethod
    def external(cls, name: str, *, consequential: bool = False) -> Tool:
        """A tool the host runs itself (a session reports its results): any arguments, and
        never called here."""
        if not name.replace("_", "").isalnum() or len(name) > MAX_ERROR_NAME_CHARS:
            raise UsageError(
                f"tool name {_shortened(name, MAX_ERROR_NAME_CHARS)!r} must be at most "
                f"{MAX_ERROR_NAME_CHARS} letters, digits and _"
            )

        def run_by_the_host(**_arguments: Any) -> None:
            raise UsageError(f"{name} is run by the host, not by FlowState")

        return cls(name, f"{name} (run by the host)", run_by_the_host, _AnyArguments, consequential)

    def schema(self) -> dict[str, Any]:
        """The OpenAI-style function schema shown to the model."""
        parameters = self.params.model_json_schema()
        parameters.pop("title", None)
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": parameters,
            },
        }

    @property
    def is_async(self) -> bool:
        """An `async def` tool: only `AsyncAgent.arun` can await it."""
        return inspect.iscoroutinefunction(self.fn)

    def call(self, arguments: dict[str, Any]) -> ToolResult:
        """Run the tool; never raises for what the tool does or returns."""
        ready = self._invoke(arguments)
        if isinstance(ready, ToolResult):
            return ready
        if inspect.isawaitable(ready):
            if inspect.iscoroutine(ready):
                ready.close()  # never awaited: close it so Python does not warn
            return _error(
                f"{self.name} returned an awaitable: async tools need `await agent.arun(...)`"
            )
        return _result(ready)

    async def acall(self, arguments: dict[str, Any]) -> ToolResult:
        """`call` for asyncio: an awaitable result is awaited."""
        ready = self._invoke(arguments)
        if isinstance(ready, ToolResult) or not inspect.isawaitable(ready):
            return ready if isinstance(ready, ToolResult) else _result(ready)
        try:
            return _result(await ready)
        except Exception as e:  # a tool's failure is information for the model
            return _failure(e)

    def invalid(self, arguments: dict[str, Any]) -> str | None:
        """Why `arguments` would be refused before the call, or None: a consequential call is
        checked before anyone is asked to approve it."""
        try:
            self.params.model_validate(arguments)
        except ValidationError as e:
            return f"invalid arguments for {self.name}: {_problems(e)}"
        return None

    def _invoke(self, arguments: dict[str, Any]) -> ToolResult | Awaitable[Any] | Any:
        try:
            args = self.params.model_validate(arguments)
        except ValidationError as e:
            return _error(f"invalid arguments for {self.name}: {_problems(e)}")
        try:
            if self._takes_model:
                return self.fn(args)
            return self.fn(**{k: getattr(args, k) for k in type(args).model_fields})
        except Exception as e:  # a tool's failure is information for the model
            return _failure(e)


def as_tools(items: list[Tool | Callable[..., Any]]) -> dict[str, Tool]:
    tools: dict[str, Tool] = {}
    for item in items:
        tool = item if isinstance(item, Tool) else Tool.from_function(item)
        if tool.name in tools:
            raise UsageError(f"two tools are named {tool.name!r}")
        tools[tool.name] = tool
    return tools


def _parameters_model(fn: Callable[..., Any], name: str) -> tuple[type[BaseModel], bool]:
    sig = inspect.signature(fn)
    hints = inspect.get_annotations(fn, eval_str=True)
    params = list(sig.parameters.values())
    if len(params) == 1:
        only = hints.get(params[0].name)
        if isinstance(only, type) and issubclass(only, BaseModel):
            return only, True
    fields: dict[str, Any] = {}
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise UsageError(f"tool {name!r}: *args and **kwargs cannot be described to a model")
        annotation = hints.get(p.name, Any)
        default = ... if p.default is inspect.Parameter.empty else p.default
        fields[p.name] = (annotation, default)
    model = create_model(f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    return model, False


def _problems(error: ValidationError) -> str:
    def where(loc: tuple[Any, ...]) -> str:
        return ".".join(_shortened(str(p), MAX_ERROR_NAME_CHARS) for p in loc) or "arguments"

    return "; ".join(f"{where(err['loc'])}: {err['msg']}" for err in error.errors())


def _failure(error: Exception) -> ToolResult:
    try:
        message = f"{type(error).__name__}: {error}"
    except Exception:  # an exception whose __str__ fails still reports its type
        message = f"{type(error).__name__} (its message could not be read)"
    return _error(message)


def _error(message: str) -> ToolResult:
    return ToolResult(bounded(message), is_error=True)


def _result(value: Any) -> ToolResult:
    try:
        return ToolResult(bounded(_render(value)), is_error=False)
    except Exception as e:  # e.g. a result whose __str__ or model_dump_json raises
        return _error(f"the result of type {type(value).__name__} could not be rendered: {e!r}")


def bounded(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    """`text` as valid Unicode (lone surrogates escaped) and at most about `limit` chars."""
    if len(text) > limit:
        text = text[:limit] + f"... [truncated: {len(text):,} characters in all]"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _shortened(name: str, limit: int) -> str:
    return name if len(name) <= limit else f"{name[: limit - 1]}…({len(name):,} characters)"


def _render(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    if nesting_depth(value, MAX_RESULT_DEPTH) > MAX_RESULT_DEPTH:
        value = _pruned(value, MAX_RESULT_DEPTH)
    try:
        return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def _pruned(value: Any, depth: int) -> Any:
    """`value` with what lies deeper than `depth` levels replaced by a marker."""
    if not isinstance(value, dict | list | tuple):
        return value
    if depth <= 0:
        return f"[nested deeper than {MAX_RESULT_DEPTH} levels: not shown]"
    if isinstance(value, dict):
        return {k: _pruned(v, depth - 1) for k, v in value.items()}
    return [_pruned(v, depth - 1) for v in value]
