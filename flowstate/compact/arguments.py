"""A memory tool's arguments, checked: the model's JSON as the tool's argument model, or a
refusal in one short line that the model reads and corrects (never the value it sent, never
a documentation link). Every shell that gives a model the memory tools checks them here."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from flowstate.models.wording import counted

MAX_ERROR_CHARS = 4_000
MAX_PROBLEMS = 8  # argument problems listed; the rest are counted

M = TypeVar("M", bound=BaseModel)


class Refused(Exception):
    """A call refused with a reason the model reads."""


def validated(model: type[M], arguments: dict[str, Any]) -> M:
    """The arguments as `model`, or `Refused` listing the first problems in one short line
    (field and reason, never the value sent, never a documentation link)."""
    if not isinstance(arguments, dict):
        raise Refused("arguments must be a JSON object")
    try:
        return model.model_validate(_json_strings(model, arguments))
    except ValidationError as e:
        problems = e.errors(include_url=False, include_input=False, include_context=False)
        parts = []
        for item in problems[:MAX_PROBLEMS]:
            where = ".".join(str(p) for p in item["loc"])[:120] or "arguments"
            parts.append(f"{where}: {item['msg'].removeprefix('Value error, ')}")
        more = len(problems) - MAX_PROBLEMS
        tail = f"; and {counted(more, 'more problem')}" if more > 0 else ""
        raise Refused(bounded(f"invalid arguments: {'; '.join(parts)}{tail}")) from None


def _json_strings(model: type[BaseModel], arguments: dict[str, Any]) -> dict[str, Any]:
    """Lists and objects some hosts send as JSON text, parsed (only for fields that are not
    strings, and only when the text is a JSON array or object)."""
    fixed = dict(arguments)
    for name, field in model.model_fields.items():
        value = fixed.get(name)
        if isinstance(value, str) and value[:1] in "[{" and field.annotation is not str:
            try:
                parsed = json.loads(value)
            except ValueError:
                continue
            if isinstance(parsed, list | dict):
                fixed[name] = parsed
    return fixed


def bounded(message: str) -> str:
    """At most MAX_ERROR_CHARS: hostile arguments are never echoed back in full."""
    if len(message) <= MAX_ERROR_CHARS:
        return message
    cut = len(message) - MAX_ERROR_CHARS
    return f"{message[:MAX_ERROR_CHARS]}... ({cut} more characters not shown)"
