"""The other side of the conversation: a user simulated by a model through litellm, following
tau2's guidelines and the task's scenario, or a scripted user replaying fixed turns.

A user returns its next message, or None when the conversation is over; `ended` says why
(stop, transfer, out_of_scope, or the end of a script).
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel

from flowstate.llm.client import ModelClient
from flowstate.models.records import Usage
from flowstate_bench.tau.data import Scenario

GREETING = "Hi! How can I help you today?"
STOP_TOKENS = {
    "###STOP###": "stop",
    "###TRANSFER###": "transfer",
    "###OUT-OF-SCOPE###": "out_of_scope",
}


class UserReply(BaseModel):
    message: str


class User(Protocol):
    usage: Usage
    ended: str | None

    def next(self, agent_message: str) -> str | None: ...


class ScriptedUser:
    """Says its turns in order, whatever the agent answers; then stops."""

    def __init__(self, turns: list[str]) -> None:
        self.turns = list(turns)
        self.usage = Usage()
        self.ended: str | None = None
        self._next = 0

    def next(self, agent_message: str) -> str | None:
        if self._next >= len(self.turns):
            self.ended = "stop"
            return None
        self._next += 1
        return self.turns[self._next - 1]


class LLMUser:
    """A model playing the customer. From its side the agent speaks as "user" and it answers
    as "assistant"; the first agent message is the greeting."""

    def __init__(self, client: ModelClient, scenario: Scenario, guidelines: str) -> None:
        self.client = client
        self.system = (
            f"{guidelines}\n\n# Your scenario\n{scenario.as_prompt()}\n\n"
            'Reply with JSON {"message": "<what you say to the agent>"}; put a stop token '
            "inside the message when the guidelines say so."
        )
        self.messages: list[dict[str, Any]] = []
        self.usage = Usage()
        self.ended: str | None = None

    def next(self, agent_message: str) -> str | None:
        self.messages.append({"role": "user", "content": agent_message or GREETING})
        done = self.client.complete(
            [{"role": "system", "content": self.system}, *self.messages], UserReply
        )
        self.usage += done.usage
        text = done.value.message if done.value is not None else done.text
        self.messages.append({"role": "assistant", "content": text})
        for token, why in STOP_TOKENS.items():
            if token in text:
                self.ended = why
                return None
        return text
