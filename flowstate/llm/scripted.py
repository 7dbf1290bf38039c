"""Deterministic models for tests and demos, served through litellm like any other model.

A script is registered under a name and answers to the litellm model string
`flowstate-scripted/<name>`, so `LiteLLMClient` runs the real `litellm.completion` path.

>>> from flowstate.models import FinalAnswer, StepOutput
>>> final = StepOutput(action=FinalAnswer(type="final", answer="4"))
>>> model = ScriptedModel.sequence("demo", [final])
>>> model.client().complete([{"role": "user", "content": "2+2?"}], StepOutput).value.action.answer
'4'
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from flowstate.errors import UsageError
from flowstate.llm.client import JSON_INSTRUCTION, LiteLLMClient
from flowstate.llm.registry import (
    PROVIDER,
    Message,
    ScriptError,
    ToolCalls,
    add,
    registered,
    unregister,
)

__all__ = [
    "PROVIDER",
    "Message",
    "Output",
    "ScriptError",
    "ScriptedCall",
    "ScriptedFailure",
    "ScriptedModel",
    "ToolCalls",
    "install_provider",
    "register",
    "registered",
    "render",
    "unregister",
]

Output = str | dict[str, Any] | BaseModel | ToolCalls


@dataclass(frozen=True)
class ScriptedFailure:
    """A scripted output that makes the provider fail with an HTTP-like `status`.

    429, 408 and 5xx are transient (the client retries); 4xx are not.
    """

    status: int = 503
    message: str = "scripted provider failure"


@dataclass(frozen=True)
class ScriptedCall:
    """What a scripted model was asked, and what it answered (None when it failed)."""

    messages: list[Message]
    response_format: dict[str, Any] | None
    reply: str | ToolCalls | None


@dataclass(eq=False)
class ScriptedModel:
    """A named script: a fixed `sequence` of outputs, or a `policy` of the prompt.

    Create one with `ScriptedModel.sequence(...)` or `ScriptedModel.policy(...)`; either
    registers it and installs the litellm provider once. A name names one script: registering
    another under a name in use is a UsageError. Unregister with `unregister(name)`, or use
    the model as a context manager:

        with ScriptedModel.sequence("demo", [final]) as model:
            ...                                   # unregistered when the block ends
    """

    name: str
    _outputs: list[Output | ScriptedFailure] | None = None
    _policy: Callable[[list[Message]], Output] | None = None
    calls: list[ScriptedCall] = field(default_factory=list)
    _next: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def sequence(cls, name: str, outputs: Sequence[Output | ScriptedFailure]) -> ScriptedModel:
        """Answer with `outputs` in order, one per call; the call after the last one fails."""
        for out in outputs:
            if not isinstance(out, ScriptedFailure):
                render(out)  # refuse a bad output now, not at the call that reaches it
        return register(cls(_check_name(name), _outputs=list(outputs)))

    @classmethod
    def policy(cls, name: str, fn: Callable[[list[Message]], Output]) -> ScriptedModel:
        """Answer every call with `fn(messages)`."""
        return register(cls(_check_name(name), _policy=fn))

    def __enter__(self) -> ScriptedModel:
        return self

    def __exit__(self, *exc: object) -> None:
        unregister(self.name, self)

    @property
    def model(self) -> str:
        """The litellm model string: `flowstate-scripted/<name>`."""
        return f"{PROVIDER}/{self.name}"

    @property
    def remaining(self) -> int | None:
        """Outputs a sequence has left; None for a policy."""
        return None if self._outputs is None else len(self._outputs) - self._next

    def client(self, **kwargs: Any) -> LiteLLMClient:
        """A `LiteLLMClient` for this script.

        Scripts answer in the schema by construction, so by default the client sends the
        schema as `response_format` (like a provider with structured output) instead of
        adding it to the prompt; token counts are then those of the engine's own messages.
        """
        kwargs.setdefault("structured", True)
        return LiteLLMClient(self.model, **kwargs)

    def answer(
        self, messages: list[Message], response_format: dict[str, Any] | None
    ) -> str | ToolCalls:
        """The next reply as text (or native tool calls); raises ScriptError when the script
        cannot answer.

        A step given as a dict or model is written as a model following the prompt would:
        JSON when a schema was sent or the prompt asks for JSON, else in keyword lines."""
        messages = [dict(m) for m in messages]
        lines = response_format is None and not _asks_for_json(messages)
        try:
            reply = self._reply(messages, lines)
        except ScriptError:
            self.calls.append(ScriptedCall(messages, response_format, None))
            raise
        self.calls.append(ScriptedCall(messages, response_format, reply))
        return reply

    def _reply(self, messages: list[Message], lines: bool) -> str | ToolCalls:
        if self._policy is not None:
            try:
                return render(self._policy(messages), lines)
            except Exception as e:
                # a bug in the policy is not a provider hiccup: report it as non-retryable
                raise ScriptError(
                    400, f"policy of scripted model {self.name!r} raised {e!r}"
                ) from e
        assert self._outputs is not None
        with self._lock:
            if self._next >= len(self._outputs):
                raise ScriptError(
                    400,
                    f"scripted model {self.name!r} is exhausted: all {len(self._outputs)} "
                    f"outputs were used and call {self._next + 1} has nothing to return",
                )
            out = self._outputs[self._next]
            self._next += 1
        if isinstance(out, ScriptedFailure):
            raise ScriptError(out.status, out.message)
        return render(out, lines)


def render(output: Output, lines: bool = False) -> str | ToolCalls:
    """The text a model would send for `output`; with `lines`, a step (a dict or model that
    is a valid step object) in keyword lines. A string is sent as it is, native tool calls
    as calls."""
    if isinstance(output, str | ToolCalls):
        return output
    if lines:
        step = _as_step(output)
        if step is not None:
            from flowstate.llm.step_lines import parse_step_reply, render_lines

            text = render_lines(step)
            # What the line format cannot say (a tool name with a space in it) goes as JSON,
            # which a model may always send.
            if parse_step_reply(text).value == step:
                return text
    if isinstance(output, BaseModel):
        return output.model_dump_json(exclude_defaults=True, by_alias=True)
    if isinstance(output, dict):
        return json.dumps(output, ensure_ascii=False)
    raise TypeError(f"a scripted output must be str, dict or a pydantic model, not {output!r}")


def _as_step(output: Output) -> Any:
    from pydantic import ValidationError

    from flowstate.models.step import StepOutput

    if isinstance(output, StepOutput):
        return output
    if isinstance(output, dict):
        try:
            return StepOutput.model_validate(output)
        except ValidationError:
            return None  # not a step (a baseline's reply, or a deliberately broken one)
    return None


def _asks_for_json(messages: list[Message]) -> bool:
    return any(JSON_INSTRUCTION in str(m.get("content", "")) for m in messages)


# --- the registry: many named scripts at once (flowstate.llm.registry) -------------------


def register(model: ScriptedModel) -> ScriptedModel:
    """Serve `model` under its name; UsageError when another script already has that name
    (registering the same one again does nothing)."""
    if not add(model):
        raise UsageError(
            f"a scripted model named {model.name!r} is already registered; pick another name "
            "or unregister it first"
        )
    install_provider()
    return model


def install_provider() -> None:
    """Make litellm route `flowstate-scripted/...` to the registry. Safe to call repeatedly."""
    from flowstate.llm._provider import install  # imports litellm: only when a script is made

    install()


def _check_name(name: str) -> str:
    if not name or "/" in name or name != name.strip():
        raise ValueError(f"a scripted model name must be non-empty, without '/': {name!r}")
    return name
