"""A record of an agent's model calls, for those who read prompts and replies (the demo's
token accounting, the benchmarks, a debugging session); the agent itself keeps none.

    transcript = Transcript()
    agent.on_call = transcript
    agent.run("Find us a hotel")
    transcript.prompts[-1], transcript.replies[-1]    # the last call's messages and reply
    transcript.calls[-1].prompt.part_tokens()         # its prompt by part
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flowstate.engine.prompt import Message, Prompt
from flowstate.llm.client import Completion, Sent
from flowstate.models.step import StepOutput


@dataclass(frozen=True)
class Call:
    """One model call: the prompt as parts, and the completion (with what was sent)."""

    prompt: Prompt
    completion: Completion[StepOutput]

    @property
    def sent(self) -> Sent:
        """What reached litellm; the rendered prompt when the client did not say."""
        return self.completion.sent or Sent(self.prompt.messages())


@dataclass
class Transcript:
    """Every model call, in call order."""

    calls: list[Call] = field(default_factory=list)

    def __call__(self, prompt: Prompt, completion: Completion[StepOutput]) -> None:
        self.calls.append(Call(prompt, completion))

    @property
    def prompts(self) -> list[list[Message]]:
        """The messages each call sent."""
        return [c.sent.messages for c in self.calls]

    @property
    def replies(self) -> list[str]:
        return [c.completion.text for c in self.calls]

    def clear(self) -> None:
        """Forget what was recorded (e.g. between requests)."""
        self.calls.clear()
