"""A record of an agent's model calls, for those who read prompts and replies (the demo's
token accounting, the benchmarks, a debugging session); the agent itself keeps none.

    transcript = Transcript()
    agent.on_call = transcript
    agent.run("Find us a hotel")
    transcript.prompts[-1], transcript.replies[-1]    # the last call's messages and reply
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flowstate.engine.prompt import Message


@dataclass
class Transcript:
    """Every model call's messages (`prompts`) and reply text (`replies`), in call order."""

    prompts: list[list[Message]] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)

    def __call__(self, messages: list[Message], reply: str) -> None:
        self.prompts.append(messages)
        self.replies.append(reply)

    def clear(self) -> None:
        """Forget what was recorded (e.g. between requests)."""
        self.prompts.clear()
        self.replies.clear()
