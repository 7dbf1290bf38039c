"""Tools: plain Python callables with typed parameters.

The JSON schema comes from the signature (or from a pydantic model taken as the only
parameter); arguments are validated before the call, and any exception becomes an
observation the model reads, never a crash of the loop.

>>> def find_hotels(city: str, max_price: int = 200) -> list[str]:
...     '''Hotels in a city under a nightly price.'''
...     return ["Casa Azul"]
>>> Tool.from_function(find_hotels).schema()["function"]["parameters"]["required"]
['city']
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from flowstate.errors import UsageError

MAX_OUTPUT_CHARS = 20_000


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
        params, takes_model = _parameters_model(fn, name)
        doc = inspect.getdoc(fn) or name.replace("_", " ")
        return cls(name, doc, fn, params, consequential, takes_model)

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

    def call(self, arguments: dict[str, Any]) -> ToolResult:
        try:
            args = self.params.model_validate(arguments)
        except ValidationError as e:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
                for err in e.errors()
            )
            return ToolResult(f"invalid arguments for {self.name}: {problems}", is_error=True)
        try:
            if self._takes_model:
                value = self.fn(args)
            else:
                value = self.fn(**{k: getattr(args, k) for k in type(args).model_fields})
        except Exception as e:  # a tool's failure is information for the model
            return ToolResult(f"{type(e).__name__}: {e}", is_error=True)
        return ToolResult(_render(value), is_error=False)


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
    model = create_model(  # type: ignore[call-overload]
        f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **fields
    )
    return model, False


def _render(value: Any) -> str:
    if isinstance(value, str):
        text = value
    elif isinstance(value, BaseModel):
        text = value.model_dump_json()
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
        except (TypeError, ValueError):
            text = repr(value)
    if len(text) > MAX_OUTPUT_CHARS:
        text = text[:MAX_OUTPUT_CHARS] + f"... [truncated: {len(text)} characters in all]"
    return text
