"""What a provider's prompt cache saves, under the providers' own rules.

Two models, each applied to one strategy's calls in the order they are sent, with every
earlier call of the run within the cache's lifetime (the calls of one request and
consecutive requests follow each other within seconds; providers keep a prefix for 5 minutes
or more):

- **Automatic** (OpenAI): a call reuses the longest prefix it shares byte for byte with any
  earlier call, but only from 1,024 tokens and in steps of 128 (1,023 shared tokens: none
  cached; 1,300: 1,280). Cached tokens are read at a rate of the input price (10% or 50%);
  writing costs nothing extra.
- **Breakpoints** (Anthropic): the caller marks where cached prefixes end (here: the end of
  the system part, the end of FlowState's stable part, and the end of the prompt where the
  next call extends it). A prefix that ends at a breakpoint and holds at least 1,024 tokens
  is written to the cache, billed at 1.25x the input price; a later call whose prompt begins
  with a written prefix (at any block boundary or breakpoint of its own) reads it at 10%.

A call is laid out as a provider receives it: the reply schema and tool definitions first,
then the messages. Its tokens are those of `flowstate.tokens.count_request`: a prefix counts
its schema and tools as compact JSON and each message with its per-message overhead, so the
cached tokens of a call never exceed its bill.

>>> automatic_cached(1_023), automatic_cached(1_024), automatic_cached(1_300)
(0, 1024, 1280)
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from flowstate.engine.prompt import INDEX, PROTOCOL, REQUEST, TOOLS, Prompt
from flowstate.engine.prompt_costs import CACHE_MIN_TOKENS, CACHE_STEP, cached_tokens
from flowstate.llm.client import Sent
from flowstate.tokens import TOKENS_PER_MESSAGE, compact_json, count_tokens

MIN_CACHED = CACHE_MIN_TOKENS  # 1,024: OpenAI, and Anthropic's Sonnet and Opus models
STEP = CACHE_STEP  # 128: OpenAI caches in steps of 128 tokens
RATES = (0.1, 0.5)  # cached reads as a share of the input price
WRITE_RATE = 1.25  # Anthropic: a cache write costs 1.25x the input price
READ_RATE = 0.1  # Anthropic: a cache read costs 10%
# FlowState's parts that do not change within a request, when they come first.
STABLE_PARTS = frozenset({PROTOCOL, TOOLS, INDEX, REQUEST})


def automatic_cached(shared: int) -> int:
    """Tokens an automatic cache bills at the cached rate for a shared prefix of `shared`
    (the library's rule, `flowstate.engine.prompt_costs.cached_tokens`)."""
    return cached_tokens(shared)


@dataclass(frozen=True)
class Piece:
    """One block as the provider receives it: `marker` (what kind of block: the schema, a
    tool, a message's role) and its text; `overhead`: the tokens the block costs beyond its
    text (a message's framing and role)."""

    marker: str
    text: str
    overhead: int = 0


@dataclass(frozen=True)
class Layout:
    """A call as a provider lays it out, with the places a cache breakpoint goes: each
    `(piece, chars)`, the prefix that ends `chars` into piece `piece`."""

    pieces: tuple[Piece, ...]
    breakpoints: tuple[tuple[int, int], ...] = ()
    tokens: int = 0  # the call's bill

    def serialised(self) -> str:
        return "".join(f"\x00{p.marker}\x00{p.text}" for p in self.pieces)

    def prefix_tokens(self, piece: int, chars: int) -> int:
        """Tokens of the prefix ending `chars` into piece `piece`."""
        p = self.pieces[piece]
        whole = sum(self._piece_tokens()[:piece])
        if chars >= len(p.text):
            part = self._piece_tokens()[piece]
        else:
            part = p.overhead + count_tokens(p.text[:chars]) if chars else 0
        return min(whole + part, self.tokens)

    def _piece_tokens(self) -> list[int]:
        return _tokens_of(self.pieces)

    def at_char(self, n: int) -> tuple[int, int]:
        """The (piece, chars) that the first `n` characters of `serialised()` end in."""
        pos = 0
        for i, p in enumerate(self.pieces):
            head = len(p.marker) + 2
            if n <= pos + head:
                return i, 0
            if n <= pos + head + len(p.text):
                return i, n - pos - head
            pos += head + len(p.text)
        return len(self.pieces) - 1, len(self.pieces[-1].text) if self.pieces else 0


@lru_cache(maxsize=64)
def _tokens_of(pieces: tuple[Piece, ...]) -> list[int]:
    return [p.overhead + count_tokens(p.text) for p in pieces]


def _message_pieces(messages: Iterable[Mapping[str, Any]]) -> list[Piece]:
    out = []
    for m in messages:
        role = str(m.get("role", ""))
        overhead = TOKENS_PER_MESSAGE + count_tokens(role)
        out.append(Piece(role, str(m.get("content", "") or ""), overhead))
    return out


def _head(sent: Sent) -> list[Piece]:
    out = []
    if sent.response_format:
        out.append(Piece("schema", compact_json(sent.response_format)))
    out += [Piece("tool", compact_json(t)) for t in sent.tools or ()]
    return out


def chat_layout(sent: Sent) -> Layout:
    """A chat transcript (the baselines): a breakpoint at the end of the system part (schema,
    tools, the leading system messages)."""
    head, messages = _head(sent), _message_pieces(sent.messages)
    pieces = (*head, *messages)
    system = len(head) + next(
        (i for i, p in enumerate(messages) if p.marker != "system"), len(messages)
    )
    marks = [(system - 1, len(pieces[system - 1].text))] if system else []
    return Layout(pieces, tuple(marks), sent.tokens())


def flowstate_layout(sent: Sent, prompt: Prompt) -> Layout:
    """A FlowState call: breakpoints at the end of the system part and at the end of the
    stable part (the leading parts a request does not change: protocol, tools, index,
    request)."""
    layout = chat_layout(sent)
    pieces = layout.pieces
    user = next((i for i, p in enumerate(pieces) if p.marker == "user"), None)
    if user is None:
        return layout
    rendered = [p.rendered for p in prompt.parts if p.role == "user"]
    names = [p.name for p in prompt.parts if p.role == "user"]
    stable = 0
    while stable < len(names) and names[stable] in STABLE_PARTS:
        stable += 1
    marks = list(layout.breakpoints)
    if 0 < stable < len(names):
        head = "\n\n".join(rendered[:stable])
        if pieces[user].text.startswith(head):
            marks.append((user, len(head)))
    return Layout(pieces, tuple(sorted(dict.fromkeys(marks))), layout.tokens)


def layout_of(sent: Sent, prompt: Prompt | None = None) -> Layout:
    return flowstate_layout(sent, prompt) if prompt is not None else chat_layout(sent)


def with_appended(layouts: Sequence[Layout]) -> list[Layout]:
    """A strategy's layouts in sending order, each with a breakpoint at the end of its prompt
    where the next call begins with that whole prompt (an append-only transcript: its caller
    knows the next call extends it), and none where it does not (a breakpoint there would
    only pay the write)."""
    out = []
    for layout, after in zip(layouts, [*layouts[1:], None], strict=True):
        n = len(layout.pieces)
        if after is not None and n and after.pieces[:n] == layout.pieces:
            end = (n - 1, len(layout.pieces[-1].text))
            marks = tuple(sorted({*layout.breakpoints, end}))
            layout = Layout(layout.pieces, marks, layout.tokens)
        out.append(layout)
    return out


@dataclass(frozen=True)
class Billed:
    """One call under both cache models: its prompt tokens, what the automatic cache reads,
    and what the breakpoint cache reads and writes."""

    tokens: int
    completion: int
    shared: int  # tokens of the longest prefix shared with an earlier call
    cached: int  # automatic: tokens read at the cached rate (`automatic_cached(shared)`)
    read: int  # breakpoints: tokens read at READ_RATE
    written: int  # breakpoints: tokens written at WRITE_RATE

    def effective_input(self, rate: float) -> float:
        """Automatic cache: input tokens at full-price equivalents, cached ones at `rate`."""
        return self.tokens - self.cached * (1 - rate)

    @property
    def breakpoint_input(self) -> float:
        """Breakpoint cache: input tokens at full-price equivalents."""
        rest = self.tokens - self.read - self.written
        return rest + READ_RATE * self.read + WRITE_RATE * self.written


@dataclass
class CacheRun:
    """Both caches over one strategy's calls in sending order (`bill` each call once)."""

    _seen: list[str] = field(default_factory=list)  # earlier calls, sorted
    _written: dict[int, int] = field(default_factory=dict)  # prefix hash -> tokens

    def bill(self, layout: Layout, completion: int = 0) -> Billed:
        text = layout.serialised()
        chars = self._longest_shared(text)
        shared = layout.prefix_tokens(*layout.at_char(chars)) if chars else 0
        bisect.insort(self._seen, text)
        read, written = self._breakpoints(layout)
        return Billed(layout.tokens, completion, shared, automatic_cached(shared), read, written)

    def _longest_shared(self, text: str) -> int:
        """The longest prefix `text` shares with any earlier call: with one of its two
        neighbours in sorted order."""
        at = bisect.bisect_left(self._seen, text)
        near = self._seen[max(at - 1, 0) : at + 1]
        return max((_common(text, other) for other in near), default=0)

    def _breakpoints(self, layout: Layout) -> tuple[int, int]:
        keys = _prefix_keys(layout)
        read = max((self._written.get(k, 0) for k in keys.values()), default=0)
        written = 0
        for mark in layout.breakpoints:
            tokens = layout.prefix_tokens(*mark)
            if tokens >= MIN_CACHED and tokens > read:
                key = keys[mark]
                if key not in self._written:
                    written = max(written, tokens - read)
                self._written[key] = tokens
        return read, written


def _prefix_keys(layout: Layout) -> dict[tuple[int, int], int]:
    """A key for every prefix a cache lookup considers: each block boundary and each
    breakpoint, chained so that equal keys mean equal prefixes."""
    keys: dict[tuple[int, int], int] = {}
    chain = 0
    cuts: dict[int, list[int]] = {}
    for piece, chars in layout.breakpoints:
        cuts.setdefault(piece, []).append(chars)
    for i, p in enumerate(layout.pieces):
        for chars in sorted(set(cuts.get(i, [])) - {len(p.text)}):
            keys[(i, chars)] = hash((chain, p.marker, p.text[:chars]))
        chain = hash((chain, p.marker, p.text))
        keys[(i, len(p.text))] = chain
    return keys


def _common(a: str, b: str) -> int:
    """Length of the common prefix of a and b (binary search on slices: C speed)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def bill_calls(calls: Sequence[tuple[Layout, int]]) -> list[Billed]:
    """Both caches over one strategy's calls in sending order: (layout, completion tokens)
    each, the end-of-prompt breakpoints placed by `with_appended`."""
    run = CacheRun()
    layouts = with_appended([layout for layout, _ in calls])
    return [run.bill(layout, n) for layout, (_, n) in zip(layouts, calls, strict=True)]
