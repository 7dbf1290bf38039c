"""The scripts litellm's `flowstate-scripted/<name>` models answer from, by name.

Below both the scripted models (which register here) and the litellm provider (which looks
them up here), so that neither imports the other.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any, Protocol

PROVIDER = "flowstate-scripted"

Message = dict[str, Any]


class ScriptError(Exception):
    """A script cannot answer; `status` is how the provider reports it to litellm."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class ToolCalls:
    """A scripted reply that calls tools the native way (the chat API's `tool_calls`), for an
    agent that sends tool definitions: `calls` are (name, arguments) pairs, in order."""

    calls: tuple[tuple[str, dict[str, Any]], ...]

    def as_json(self) -> str:
        """The calls as the model wrote them, names and arguments (for the record)."""
        return json.dumps(
            [{"name": n, "arguments": a} for n, a in self.calls],
            ensure_ascii=False,
            separators=(",", ":"),
        )


class Script(Protocol):
    """What the provider needs of a registered script."""

    @property
    def name(self) -> str: ...

    def answer(
        self, messages: list[Message], response_format: dict[str, Any] | None
    ) -> str | ToolCalls: ...


_registry: dict[str, Script] = {}
_registry_lock = threading.Lock()


def add(script: Script) -> bool:
    """Serve `script` under its name; False when another script already has that name
    (adding the same one again changes nothing)."""
    with _registry_lock:
        return _registry.setdefault(script.name, script) is script


def unregister(name: str, script: Script | None = None) -> None:
    """Stop serving the script of that name (only if it is `script`, when given)."""
    with _registry_lock:
        if script is None or _registry.get(name) is script:
            _registry.pop(name, None)


def registered() -> list[str]:
    """The names of the scripts served now."""
    with _registry_lock:
        return sorted(_registry)


def lookup(name: str) -> Script:
    with _registry_lock:
        script = _registry.get(name)
        known = ", ".join(sorted(_registry)) or "none"
    if script is None:
        raise ScriptError(404, f"no scripted model named {name!r} (registered: {known})")
    return script
