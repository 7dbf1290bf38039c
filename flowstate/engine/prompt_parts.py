"""What each part of a FlowState prompt costs, and how much of it a provider can cache.

The parts are those `flowstate.engine.prompt` writes, in prompt order: protocol and tools (the
system message, identical at every call), the Historical State Index (changes only at commits),
the Active State, the request, the rejections of the previous step. `framing` is the rest: the
chat format's per-message tokens, the blank lines between parts and the closing step line, so
the parts always add up to the prompt's token count.

Provider prompt caching (OpenAI, Anthropic, Gemini) reuses the longest prefix a call shares
byte for byte with an earlier one; `shared_prefix` measures it between consecutive calls.

>>> parts = part_tokens([{"role": "system", "content": "rules\\n\\nTools:\\nf(): g"},
...                      {"role": "user", "content": "# Historical State Index\\nx"}])
>>> parts["protocol"], parts["tools"], parts["index"], sum(parts.values())
(1, 5, 6, 24)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flowstate.tokens import count_messages, count_tokens

PARTS = ("protocol", "tools", "index", "active_state", "request", "rejections", "framing")
_TOOLS = "\n\nTools"
_USER_HEADERS = (  # (part, the header that starts it), in prompt order
    ("index", "# Historical State Index\n"),
    ("active_state", "\n\n# Active State\n"),
    ("request", "\n\n# User request ("),
    ("rejections", "\n\n# Rejected at your previous step\n"),
    ("framing", "\n\nStep "),
)

Message = Mapping[str, Any]


def split(messages: Sequence[Message]) -> dict[str, str]:
    """The text of each part (framing excluded); parts a prompt lacks are ''."""
    out = dict.fromkeys(PARTS[:-1], "")
    system = next((m["content"] for m in messages if m.get("role") == "system"), "")
    user = messages[-1]["content"] if messages and messages[-1].get("role") == "user" else ""
    protocol, tools, rest = system.partition(_TOOLS)
    out["protocol"], out["tools"] = protocol, (tools and tools.lstrip("\n")) + rest
    # The index (one line per entry, never a blank line) ends at the first Active State header;
    # the parts after the Active State are found from the end, because tool output in the
    # Active State may contain anything, while nothing the engine writes after a header repeats
    # the next one.
    bounds: list[tuple[str, int]] = []
    if user.startswith(_USER_HEADERS[0][1]):
        bounds.append(("index", 0))
    active_at = user.find(_USER_HEADERS[1][1])
    tail: list[tuple[str, int]] = []
    end = len(user)
    for part, header in reversed(_USER_HEADERS[2:]):
        at = user.rfind(header, max(active_at, 0), end)
        if at >= 0:
            tail.append((part, at))
            end = at
    if active_at >= 0:
        bounds.append(("active_state", active_at))
    bounds += reversed(tail)
    for i, (part, at) in enumerate(bounds):
        stop = bounds[i + 1][1] if i + 1 < len(bounds) else len(user)
        if part != "framing":
            out[part] = user[at:stop].strip("\n")
    return out


def part_tokens(messages: Sequence[Message], model: str | None = None) -> dict[str, int]:
    """Tokens of each part; they add up to `count_messages(messages)`."""
    texts = split(messages)
    tokens = {part: count_tokens(text, model) for part, text in texts.items()}
    tokens["framing"] = count_messages(messages, model) - sum(tokens.values())
    return tokens


def total_parts(prompts: Iterable[Sequence[Message]], model: str | None = None) -> dict[str, int]:
    """`part_tokens` summed over many calls."""
    total = dict.fromkeys(PARTS, 0)
    for messages in prompts:
        for part, n in part_tokens(messages, model).items():
            total[part] += n
    return total


@dataclass(frozen=True)
class SharedPrefix:
    """How much of a call's prompt repeats the previous call's byte for byte."""

    chars: int
    tokens: int  # tokens of the shared text
    share: float  # tokens / tokens of the call's text


def _serialised(messages: Sequence[Message]) -> str:
    return "".join(f"<{m.get('role', '')}>{m.get('content', '')}" for m in messages)


def shared_prefix(
    previous: Sequence[Message], current: Sequence[Message], model: str | None = None
) -> SharedPrefix:
    a, b = _serialised(previous), _serialised(current)
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    # Only the contents are tokens; the role markers are the chat format's, counted apart.
    shared = _contents(current, n)
    total = count_tokens(_contents(current, len(b)), model)
    tokens = count_tokens(shared, model)
    return SharedPrefix(n, tokens, tokens / total if total else 0.0)


def _contents(messages: Sequence[Message], chars: int) -> str:
    """The message contents within the first `chars` of the serialised form."""
    out, pos = [], 0
    for m in messages:
        head = len(f"<{m.get('role', '')}>")
        content = str(m.get("content", ""))
        start = pos + head
        if chars <= start:
            break
        out.append(content[: chars - start])
        pos = start + len(content)
    return "".join(out)


def prefix_shares(prompts: Sequence[Sequence[Message]], model: str | None = None) -> list[float]:
    """The shared-prefix share of every call after the first, in order."""
    return [
        shared_prefix(prev, cur, model).share
        for prev, cur in zip(prompts, prompts[1:], strict=False)
    ]
