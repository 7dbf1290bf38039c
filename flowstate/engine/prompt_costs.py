"""What each part of a model call costs, and how much of it a provider can cache.

A call's bill is what reached litellm (`flowstate.llm.client.Sent`): the messages, the reply
schema (`response_format`, or an instruction the client added to the prompt) and tool
definitions. Its parts are the prompt's (`flowstate.engine.prompt`), plus `reply_format` (what
the client sent beyond the rendered prompt) and `framing` (headers, blank lines, the step line
and the chat format's per-message tokens), so the parts always add up to the bill.

The fixed price of a call is what does not depend on the memory or the request: protocol,
reply format, tools and framing.

Provider prompt caching (OpenAI, Anthropic, Gemini) reuses the longest prefix a call shares
byte for byte with an earlier one; `shared_prefix` measures it between consecutive calls, the
schema and tool definitions first (providers put them ahead of the messages), and
`cached_tokens` gives what a provider reads of it from its cache: nothing below 1,024 tokens,
then steps of 128.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flowstate.engine.prompt import STEP, Prompt
from flowstate.llm.client import Sent
from flowstate.tokens import compact_json, count_messages, count_tokens

# Parts of FlowState's calls in prompt order, as reports show them.
PARTS = (
    "protocol",
    "reply_format",
    "tools",
    "index",
    "request",
    "active_state",
    "rejections",
    "framing",
)
FIXED = ("protocol", "reply_format", "tools", "framing")


def call_parts(prompt: Prompt, sent: Sent, model: str | None = None) -> dict[str, int]:
    """Tokens of each part of one call; they add up to `sent.tokens(model)`."""
    tokens = dict.fromkeys(PARTS, 0)
    for name, n in prompt.part_tokens(model).items():
        name = "framing" if name == STEP else name
        tokens[name] = tokens.get(name, 0) + n
    tokens["reply_format"] = sent.tokens(model) - count_messages(prompt.messages(), model)
    return tokens


def fixed_price(parts: Mapping[str, float]) -> float:
    """What a call costs whatever the memory and the request hold (of one call's parts, or
    of their means over many)."""
    return sum(parts.get(p, 0) for p in FIXED)


def total_parts(calls: Iterable[tuple[Prompt, Sent]], model: str | None = None) -> dict[str, int]:
    """`call_parts` summed over many calls."""
    total = dict.fromkeys(PARTS, 0)
    for prompt, sent in calls:
        for part, n in call_parts(prompt, sent, model).items():
            total[part] = total.get(part, 0) + n
    return total


@dataclass(frozen=True)
class SharedPrefix:
    """How much of a call's prompt repeats the previous call's byte for byte."""

    chars: int
    tokens: int  # tokens of the shared text
    share: float  # tokens / tokens of the call's text


def _pieces(sent: Sent) -> list[tuple[str, str]]:
    """The call as a provider lays it out: (marker, text) pieces, schema and tools first."""
    out: list[tuple[str, str]] = []
    if sent.response_format:
        out.append(("<schema>", compact_json(sent.response_format)))
    out += [("<tool>", compact_json(t)) for t in sent.tools or ()]
    out += [(f"<{m.get('role', '')}>", _message_text(m)) for m in sent.messages]
    return out


def _message_text(message: Mapping[str, Any]) -> str:
    """A message's content, and the tool calls an assistant message carries."""
    text = str(message.get("content", "") or "")
    calls = message.get("tool_calls")
    return text + compact_json(calls) if calls else text


# Providers cache a prompt's prefix only from this many tokens on, in steps of CACHE_STEP
# (OpenAI's rule; Anthropic's and Gemini's minimums are of the same size).
CACHE_MIN_TOKENS = 1_024
CACHE_STEP = 128


def cached_tokens(shared: int) -> int:
    """The tokens a provider reads from its cache when `shared` tokens of a call's prompt
    repeat an earlier call's: none below 1,024, then whole 128-token steps.

    >>> cached_tokens(1_023), cached_tokens(1_024), cached_tokens(1_300)
    (0, 1024, 1280)
    """
    if shared < CACHE_MIN_TOKENS:
        return 0
    return CACHE_MIN_TOKENS + (shared - CACHE_MIN_TOKENS) // CACHE_STEP * CACHE_STEP


def cached_per_call(calls: Sequence[Sent], model: str | None = None) -> list[int]:
    """Each call's tokens read from a provider's cache, the calls being consecutive within
    the cache's lifetime (the first call reads nothing)."""
    shared = [shared_prefix(a, b, model).tokens for a, b in zip(calls, calls[1:], strict=False)]
    return [0, *(cached_tokens(n) for n in shared)] if calls else []


def shared_prefix(previous: Sent, current: Sent, model: str | None = None) -> SharedPrefix:
    a = "".join(marker + text for marker, text in _pieces(previous))
    pieces = _pieces(current)
    b = "".join(marker + text for marker, text in pieces)
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    # Only the texts are tokens; the markers are the format's, counted apart.
    shared = _texts(pieces, n)
    total = count_tokens(_texts(pieces, len(b)), model)
    tokens = count_tokens(shared, model)
    return SharedPrefix(n, tokens, tokens / total if total else 0.0)


def _texts(pieces: list[tuple[str, str]], chars: int) -> str:
    """The texts within the first `chars` of the serialised form."""
    out, pos = [], 0
    for marker, text in pieces:
        start = pos + len(marker)
        if chars <= start:
            break
        out.append(text[: chars - start])
        pos = start + len(text)
    return "".join(out)


def prefix_shares(calls: Sequence[Sent], model: str | None = None) -> list[float]:
    """The shared-prefix share of every call after the first, in order."""
    return [
        shared_prefix(prev, cur, model).share for prev, cur in zip(calls, calls[1:], strict=False)
    ]
