"""Tools as the model reads them: one signature line each, from their JSON schemas.

A JSON schema spends most of its tokens on punctuation and keys (`"type":"string"`); a signature
says the same in a third of the tokens, and models read signatures fluently. Nothing of the
schema is dropped: constraints a signature has no syntax for (`minimum`, `pattern`, ...) are
written after the type.

>>> from flowstate.engine.tools import Tool
>>> def find_hotels(city: str, max_price: int = 200, tags: list[str] | None = None) -> list:
...     '''Hotels in a city.'''
>>> signature(Tool.from_function(find_hotels))
'find_hotels(city: str, max_price: int = 200, tags: list[str]|null = null): Hotels in a city.'
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flowstate.engine.tools import Tool

_PRIMITIVES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}
# Keys the type syntax already expresses, or that only name things (titles).
_STRUCTURAL = {
    "type", "anyOf", "oneOf", "allOf", "items", "properties", "required", "additionalProperties",
    "$ref", "$defs", "title", "default", "description", "enum", "const", "discriminator",
}  # fmt: skip
CONSEQUENTIAL_MARK = " [consequential: cite the states it relies on]"


def tools_text(tools: Iterable[Tool]) -> str:
    lines = [signature(t) for t in tools]
    if not lines:
        return "Tools: none. Answer with a final action."
    return "Tools:\n" + "\n".join(lines)


def signature(tool: Tool) -> str:
    params = tool.params.model_json_schema()
    defs = params.get("$defs", {})
    args = ", ".join(_param(n, s, n in params.get("required", ()), defs) for n, s in _props(params))
    notes = [
        f"{name}: {_one_line(s['description'])}"
        for name, s in _props(params)
        if isinstance(s, dict) and s.get("description")
    ]
    line = f"{tool.name}({args}): {_one_line(tool.description)}"
    if notes:
        line += " (" + "; ".join(notes) + ")"
    return line + (CONSEQUENTIAL_MARK if tool.consequential else "")


def _props(schema: dict[str, Any]) -> list[tuple[str, Any]]:
    return list(schema.get("properties", {}).items())


def _param(name: str, schema: dict[str, Any], required: bool, defs: dict[str, Any]) -> str:
    text = f"{name}{'' if required or 'default' in schema else '?'}: {type_text(schema, defs)}"
    if "default" in schema:
        text += f" = {_json(schema['default'])}"
    return text


def type_text(schema: Any, defs: dict[str, Any]) -> str:
    """A JSON schema as a compact type: `str`, `list[int]`, `"a"|"b"`, `{x: int, y?: str}`."""
    if not isinstance(schema, dict) or not schema:
        return "any"
    if "$ref" in schema:
        return type_text(defs.get(schema["$ref"].rsplit("/", 1)[-1], {}), defs)
    if "const" in schema:
        base = _json(schema["const"])
    elif "enum" in schema:
        base = "|".join(_json(v) for v in schema["enum"])
    elif "anyOf" in schema or "oneOf" in schema:
        base = "|".join(type_text(s, defs) for s in schema.get("anyOf") or schema["oneOf"])
    elif "allOf" in schema:
        base = " & ".join(type_text(s, defs) for s in schema["allOf"])
    else:
        base = _typed(schema, defs)
    extra = [f"{k} {_json(v)}" for k, v in schema.items() if k not in _STRUCTURAL]
    return f"{base} ({', '.join(extra)})" if extra else base


def _typed(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        return "|".join(_typed({**schema, "type": k}, defs) for k in kind)
    if kind == "array":
        return f"list[{type_text(schema['items'], defs)}]" if "items" in schema else "list"
    if kind == "object" or "properties" in schema:
        if "properties" in schema:
            required = set(schema.get("required", ()))
            fields = ", ".join(_param(n, s, n in required, defs) for n, s in _props(schema))
            return "{" + fields + "}"
        extra = schema.get("additionalProperties")
        return f"dict[str, {type_text(extra, defs)}]" if isinstance(extra, dict) else "dict"
    if kind == "null":
        return "null"
    return _PRIMITIVES.get(str(kind), str(kind) if kind else "any")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
