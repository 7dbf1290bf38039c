"""The agent a user would run instead of FlowState: plain tool calling, the whole history kept.

Every call sends the system line, every earlier request's messages (user text, tool calls,
tool results, answers) and this request's so far, with the tools as the provider receives
them (their JSON schemas). It calls the model only to act, through litellm's native tool
calling, so its calls are counted at the same boundary as FlowState's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from flowstate.engine.tools import Tool
from flowstate.errors import ModelError
from flowstate.llm.client import Sent
from flowstate.tokens import count_tokens

PLAIN_SYSTEM = "You are a travel assistant. Use the tools when you need them, then answer."


@dataclass
class PlainRun:
    """One request of the plain agent: its answer and the bill of each of its calls."""

    answer: str
    prompt_tokens: list[int] = field(default_factory=list)  # per call, as sent
    completion_tokens: list[int] = field(default_factory=list)  # per call, as written
    sent: list[Sent] = field(default_factory=list)

    @property
    def calls(self) -> int:
        return len(self.sent)


class PlainAgent:
    """A tool-calling agent over litellm that keeps the whole conversation in its prompt."""

    def __init__(self, model: str, tools: list[Tool], max_steps: int = 8) -> None:
        self.model = model
        self.tools = {t.name: t for t in tools}
        self.schemas = [t.schema() for t in tools]
        self.max_steps = max_steps
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": PLAIN_SYSTEM}]

    def run(self, text: str) -> PlainRun:
        from flowstate.llm import load_litellm

        litellm = load_litellm()
        self.messages.append({"role": "user", "content": text})
        run = PlainRun(answer="")
        for _ in range(self.max_steps):
            sent = Sent([dict(m) for m in self.messages], None, self.schemas)
            try:
                response = litellm.completion(
                    model=self.model, messages=sent.messages, tools=self.schemas
                )
            except Exception as e:
                raise ModelError(f"the plain agent's model {self.model!r} failed: {e}") from e
            message = response.choices[0].message
            calls = list(message.tool_calls or [])
            run.sent.append(sent)
            run.prompt_tokens.append(sent.tokens(self.model))
            # Counted as the prompt is, whatever usage the provider reports (another tokenizer's)
            run.completion_tokens.append(_written(message.content, calls, self.model))
            if not calls:
                run.answer = message.content or ""
                self.messages.append({"role": "assistant", "content": run.answer})
                return run
            self.messages.append(
                {
                    "role": "assistant",
                    "content": message.content,
                    "tool_calls": [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {
                                "name": c.function.name,
                                "arguments": c.function.arguments,
                            },
                        }
                        for c in calls
                    ],
                }
            )
            for call in calls:
                self.messages.append(
                    {"role": "tool", "tool_call_id": call.id, "content": self._output(call)}
                )
        raise ModelError(f"the plain agent gave no answer in {self.max_steps} calls")

    def _output(self, call: Any) -> str:
        tool = self.tools.get(call.function.name)
        if tool is None:
            return f"error: no tool named {call.function.name!r}"
        try:
            arguments = json.loads(call.function.arguments or "{}")
        except ValueError as e:
            return f"error: the arguments are not JSON: {e}"
        return tool.call(arguments).output


def _written(content: str | None, calls: list[Any], model: str) -> int:
    """Completion tokens of a reply, by the prompts' tokenizer: its text, and each call's name
    and arguments."""
    return count_tokens(content or "", model) + sum(
        count_tokens(c.function.name, model) + count_tokens(c.function.arguments or "", model)
        for c in calls
    )
