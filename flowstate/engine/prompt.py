"""The prompt of one step, as named parts until it is sent.

Parts, in prompt order: protocol and tools (the system message, identical at every call), then
the Historical State Index (changes only at commits), the request, the Active State, the
previous step's rejections and the step line (the user message). Stable parts come first, and
within a request each call only appends to the last, so a provider's prompt cache reuses most
of every call. Rebuilt at every step from the Active State, so the model sees exactly what the
rules check against; processors (`Prompt.replaced`, `Prompt.inserted`) rewrite parts, never
rendered text, and `messages()` renders once.

>>> p = Prompt((PromptPart(PROTOCOL, "rules", role="system"), PromptPart(REQUEST, "hi", "# R")))
>>> p.messages()
[{'role': 'system', 'content': 'rules'}, {'role': 'user', 'content': '# R\\nhi'}]
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, Literal

from flowstate.engine.active_text import active_state_text
from flowstate.engine.index import RenderedIndex
from flowstate.engine.protocol import ReplyFormat, protocol
from flowstate.engine.tool_text import tools_text
from flowstate.engine.tools import Tool
from flowstate.models.active import ActiveState
from flowstate.rules.limits import Limits
from flowstate.tokens import count_messages, count_tokens

Message = dict[str, Any]

# The parts the engine writes; a processor may add parts of its own names.
PROTOCOL = "protocol"
TOOLS = "tools"
INDEX = "index"
REQUEST = "request"
ACTIVE_STATE = "active_state"
REJECTIONS = "rejections"
STEP = "step"
ENGINE_PARTS = (PROTOCOL, TOOLS, INDEX, REQUEST, ACTIVE_STATE, REJECTIONS, STEP)

INDEX_HEADER = "# Historical State Index"
# A later call's index part under `IndexResend.FIRST_CALL`.
INDEX_SENT_ONCE = "(shown at this request's first step; what it opened is below)"
ACTIVE_HEADER = "# Active State"
REJECTIONS_HEADER = "# Rejected at your previous step"


class IndexResend(StrEnum):
    """Which of a request's calls show the whole Historical State Index.

    `every_call`: all of them. `first_call`: the first call of a request (and the first after
    it resumes); later calls show one line instead, the states opened meanwhile being in the
    Active State with their summaries. The index is what a request reads to choose what to
    open; once opened, the states it chose are what later calls use.
    """

    EVERY_CALL = "every_call"
    FIRST_CALL = "first_call"


@dataclass(frozen=True)
class PromptPart:
    """One part: its text, and the header that introduces it (framing, not content)."""

    name: str
    text: str
    header: str = ""
    role: Literal["system", "user"] = "user"

    @property
    def rendered(self) -> str:
        return f"{self.header}\n{self.text}" if self.header else self.text


@dataclass(frozen=True)
class Prompt:
    """The parts of one model call, in order, and the request they are for."""

    parts: tuple[PromptPart, ...]
    request_id: str = ""

    def messages(self) -> list[Message]:
        """The chat messages: the system parts, then the user parts, each joined by a blank
        line."""
        out: list[Message] = []
        for role in ("system", "user"):
            texts = [p.rendered for p in self.parts if p.role == role]
            if texts:
                out.append({"role": role, "content": "\n\n".join(texts)})
        return out

    def get(self, name: str) -> PromptPart | None:
        return next((p for p in self.parts if p.name == name), None)

    def text(self, name: str) -> str:
        """The text of part `name` ('' when the prompt has none)."""
        part = self.get(name)
        return part.text if part else ""

    def replaced(self, name: str, text: str, header: str | None = None) -> Prompt:
        """This prompt with part `name`'s text (and header) replaced."""
        if self.get(name) is None:
            raise KeyError(f"the prompt has no part {name!r}")
        parts = tuple(
            replace(p, text=text, header=p.header if header is None else header)
            if p.name == name
            else p
            for p in self.parts
        )
        return replace(self, parts=parts)

    def inserted(self, part: PromptPart, before: str) -> Prompt:
        """This prompt with `part` inserted before part `before`."""
        at = next((i for i, p in enumerate(self.parts) if p.name == before), None)
        if at is None:
            raise KeyError(f"the prompt has no part {before!r}")
        return replace(self, parts=(*self.parts[:at], part, *self.parts[at:]))

    def part_tokens(self, model: str | None = None) -> dict[str, int]:
        """Tokens of each part's text, and `framing`: headers, blank lines and the chat
        format's per-message tokens; together they are `count_messages(self.messages())`."""
        tokens: dict[str, int] = {}
        for p in self.parts:
            tokens[p.name] = tokens.get(p.name, 0) + count_tokens(p.text, model)
        tokens["framing"] = count_messages(self.messages(), model) - sum(tokens.values())
        return tokens


def build_prompt(
    active: ActiveState,
    index: RenderedIndex,
    tools: Iterable[Tool],
    limits: Limits,
    max_steps: int,
    recent_observations: int = 3,
    reply_format: ReplyFormat = ReplyFormat.LINES,
    index_shown: bool = True,
    index_once: bool = False,
) -> Prompt:
    """The prompt of `active`'s next call; `index_shown=False` gives the index part as one
    line (a later call under `IndexResend.FIRST_CALL`, which `index_once` tells the model
    in the protocol, at every call alike)."""
    has_past = not index.empty
    parts = [
        PromptPart(PROTOCOL, protocol(limits, reply_format, has_past, index_once), role="system"),
        PromptPart(TOOLS, tools_text(tools), role="system"),
    ]
    if has_past:
        # No token count in the header: it changes at every commit and would end the prefix
        # that consecutive requests share (and that provider prompt caching reuses) here.
        parts.append(
            PromptPart(INDEX, index.text if index_shown else INDEX_SENT_ONCE, INDEX_HEADER)
        )
    parts.append(PromptPart(REQUEST, active.text, f"# User request ({active.request_id})"))
    if active.step or not active.is_empty:  # nothing happened yet: nothing to show
        # A revealed state whose index line is in this prompt is not summarised again.
        listed = index.state_ids if index_shown else frozenset()
        state = active_state_text(active, recent_observations, listed)
        parts.append(PromptPart(ACTIVE_STATE, state, ACTIVE_HEADER))
    if active.rejections:
        told = "\n".join(f"- {r}" for r in active.rejections)
        parts.append(PromptPart(REJECTIONS, told, REJECTIONS_HEADER))
    parts.append(PromptPart(STEP, f"Step {active.step + 1} of {max_steps}."))
    return Prompt(tuple(parts), active.request_id)
