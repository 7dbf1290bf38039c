"""Tolerant parsing of a model's reply into a pydantic object. Pure: no litellm, no I/O.

Models wrap JSON in code fences or prose; this finds the object, validates it, and otherwise
describes what is wrong in a line the model can act on. The engine sends that line back.

>>> from flowstate.models import StepOutput
>>> parse_step('Sure! ```json\\n{"action": {"type": "final", "answer": "4"}}\\n```', StepOutput).ok
True
>>> parse_step('{"action": {"type": "done"}}', StepOutput).error
"action.type: must be 'tool' or 'final', got 'done'"

Bounds, so that no reply can crash the parser or produce a draft that cannot be saved or
reloaded: a reply holds at most MAX_REPLY_CHARS characters, and its JSON nests at most
MAX_REPLY_DEPTH objects and arrays (checked by a scan before `json.loads`, which would
otherwise raise RecursionError). The step schema adds the bounds of tool call arguments
(`flowstate.models.step.MAX_ARGUMENT_DEPTH` and `MAX_ARGUMENT_CHARS`). Every refusal says
which bound was hit, and names in error paths are shortened, so a hostile reply is never
echoed back in full.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from flowstate.models.records import is_unicode

T = TypeVar("T", bound=BaseModel)

MAX_REPORTED_ERRORS = 5
# The opening of a fenced block; its end is found with str.find (a lazy `.*?` up to the
# closing fence backtracks without bound on an unclosed fence).
_FENCE_OPEN = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?\n?")
_SNIPPET = 24
MAX_CANDIDATES = 16
MAX_REPLY_CHARS = 500_000  # room for 20 delta ops of 20,000 characters each
MAX_REPLY_DEPTH = 40  # a step object needs 3 levels above tool arguments (at most 32 deep)
MAX_NAME_CHARS = 64  # a key or name quoted in an error path


@dataclass(frozen=True)
class ParseResult(Generic[T]):
    """Either `value` (the validated object) or `error` (why not, for the model to read)."""

    value: T | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.value is not None


class _NotJSON(ValueError):
    pass


def parse_step(text: str, schema: type[T]) -> ParseResult[T]:
    """Find the JSON object in `text` and validate it against `schema`."""
    if len(text) > MAX_REPLY_CHARS:
        return ParseResult(
            error=f"the reply has {len(text):,} characters; at most {MAX_REPLY_CHARS:,}: be shorter"
        )
    try:
        data = extract_json(text, prefer=frozenset(schema.model_fields))
    except _NotJSON as e:
        return ParseResult(error=str(e))
    bad = lone_surrogate(data)
    if bad is not None:
        # json.loads turns an escaped "\ud800" into a lone surrogate, which no UTF-8 text (a
        # draft, a commit, the next prompt) can hold: refuse the reply here, at the boundary.
        where = f"{bad}: " if bad else ""
        return ParseResult(
            error=f"{where}text contains a lone surrogate (an unpaired \\ud800-\\udfff escape); "
            "send valid Unicode"
        )
    try:
        return ParseResult(value=schema.model_validate(data))
    except ValidationError as e:
        return ParseResult(error=describe_validation_error(e, data))
    except RecursionError:  # the depth scan makes this unreachable; never let it escape
        return ParseResult(error=f"the reply nests too deeply; at most {MAX_REPLY_DEPTH} levels")


def lone_surrogate(value: Any, path: str = "") -> str | None:
    """The path of the first string (or key) that is not valid Unicode, else None."""
    if isinstance(value, str):
        return None if is_unicode(value) else path
    if not isinstance(value, dict | list):
        return None
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        if isinstance(key, str) and not is_unicode(key):
            return _join(path, key.encode("utf-8", "backslashreplace").decode())
        step = f"{path}[{key}]" if isinstance(key, int) else _join(path, key)
        found = lone_surrogate(item, step)
        if found is not None:
            return found
    return None


def extract_object(text: str, start: int) -> dict[str, Any]:
    """The JSON object whose `{` is at text[start], bounded and parsed as `extract_json` does."""
    return _load_object(text, start, _balanced(text, start))


def object_spans(text: str, stop: int) -> list[tuple[int, int]]:
    """(start, end) of each top-level balanced {...} of `text` that starts before `stop`; an
    object never closed ends with the text. At most MAX_CANDIDATES."""
    return [(start, start + len(body)) for start, body in _candidates(text) if start < stop]


def balanced(text: str, start: int) -> str:
    """text[start:] up to the brace that closes text[start]; to the end when it never closes."""
    return _balanced(text, start)


def load_value(text: str, start: int) -> tuple[Any, int]:
    """The JSON value (string, number, literal, array or object) at text[start], and the
    index just past it; bounded as `extract_json` is. Raises ValueError saying what broke."""
    if start < len(text) and text[start] in "{[":
        end = _closing_brace(text, start)
        if end is None:
            raise _NotJSON(f"not valid JSON: the value starting at char {start} is never closed")
        body = text[start : end + 1]
        if _nesting(body, MAX_REPLY_DEPTH) > MAX_REPLY_DEPTH:
            raise _NotJSON(
                f"the JSON value starting at char {start} nests more than {MAX_REPLY_DEPTH} "
                f"levels; at most {MAX_REPLY_DEPTH}"
            )
    try:
        return _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as e:
        near = text[max(0, e.pos - _SNIPPET // 2) : e.pos + _SNIPPET // 2]
        raise _NotJSON(f"not valid JSON at char {e.pos}: {e.msg.lower()} near {near!r}") from None


def extract_json(text: str, prefer: frozenset[str] = frozenset()) -> Any:
    """The JSON object in `text`. The candidates are the objects of its JSON (or unlabelled)
    fenced blocks, else its top-level balanced {...}; of them, the first that parses and has
    a field of `prefer` (a `{}` in prose before the object is not the object), else the first
    that parses when none broke.

    Raises a ValueError whose message says where the JSON broke, counted in `text`.
    """
    if not text or not text.strip():
        raise _NotJSON("empty reply: expected one JSON object")
    fenced = _fenced(text)
    candidates = fenced or _candidates(text)
    if fenced and prefer:
        # A step object outside the fences too: both are weighed, so neither is dropped.
        starts = {start for start, _ in fenced}
        candidates = sorted([*fenced, *((a, b) for a, b in _candidates(text) if a not in starts)])
    first_error: _NotJSON | None = None
    first: dict[str, Any] | None = None
    found: tuple[int, dict[str, Any]] | None = None
    for start, body in candidates:
        try:
            value = _load_object(text, start, body)
        except _NotJSON as e:
            first_error = first_error or e
            continue
        if not prefer or prefer & set(value):
            if found is not None:  # a second step object: one of the two would be dropped
                raise _NotJSON(
                    f"the reply has two JSON step objects (at chars {found[0]} and {start}): "
                    "send one"
                )
            found = (start, value)
            if not prefer:
                break
            continue
        first = value if first is None else first
    if found is not None:
        return found[1]
    if first is not None and first_error is None:
        return first  # a broken object beside it was more likely the step: say why it broke
    raise first_error or _NotJSON("no JSON object found: reply with one JSON object")


def _load_object(text: str, start: int, body: str) -> dict[str, Any]:
    depth = _nesting(body, MAX_REPLY_DEPTH)
    if depth > MAX_REPLY_DEPTH:
        raise _NotJSON(
            f"the JSON object starting at char {start} nests more than {MAX_REPLY_DEPTH} "
            f"levels of objects and arrays; at most {MAX_REPLY_DEPTH}"
        )
    try:
        # strict=False: models often put raw newlines inside strings. NaN and Infinity are
        # not JSON: a draft would write them back as null, changing a tool call's arguments.
        value = _DECODER.decode(body)
    except json.JSONDecodeError as e:
        if not _closes(body):
            msg = f"not valid JSON: the object starting at char {start} is never closed"
            raise _NotJSON(msg) from None
        pos = start + e.pos
        near = text[max(0, pos - _SNIPPET // 2) : pos + _SNIPPET // 2]
        raise _NotJSON(f"not valid JSON at char {pos}: {e.msg.lower()} near {near!r}") from None
    if not isinstance(value, dict):  # cannot happen for a balanced {...}; keeps the type honest
        raise _NotJSON("expected a JSON object")
    return value


def _not_a_number(token: str) -> float:
    raise _NotJSON(f"not valid JSON: {token} is not a JSON number; use a finite number")


def _finite_float(token: str) -> float:
    value = float(token)
    if math.isfinite(value):
        return value
    return _not_a_number(token[:24])


MAX_INT_DIGITS = 4_000  # below Python's own limit (4,300), which raises a bare ValueError


def _bounded_int(token: str) -> int:
    digits = len(token.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _NotJSON(
            f"not valid JSON: an integer of {digits:,} digits; at most {MAX_INT_DIGITS:,}"
        )
    return int(token)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are each written once: a key written twice would silently keep
    only its last value (a step's first `delta`, a tool's first argument)."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise _NotJSON(f"not valid JSON: the key {key[:60]!r} is written twice in one object")
        seen.add(key)
    return dict(pairs)


_DECODER = json.JSONDecoder(
    strict=False,
    parse_constant=_not_a_number,
    parse_float=_finite_float,
    parse_int=_bounded_int,
    object_pairs_hook=_unique_keys,
)


def _candidates(text: str) -> list[tuple[int, str]]:
    """Top-level balanced {...} spans, in order (a later one is tried when an earlier one,
    say `{placeholder}` in prose, is not JSON)."""
    found: list[tuple[int, str]] = []
    start = text.find("{")
    while start >= 0 and len(found) < MAX_CANDIDATES:
        body = _balanced(text, start)
        found.append((start, body))
        start = text.find("{", start + len(body))
    return found


def _fenced(text: str) -> list[tuple[int, str]]:
    """The object of each JSON (or unlabelled) fenced block, as (offset in text, body)."""
    found: list[tuple[int, str]] = []
    pos = text.find("```")
    while pos >= 0:
        opening = _FENCE_OPEN.match(text, pos)
        assert opening is not None  # every part after the ``` may be empty
        close = text.find("```", opening.end())
        if close < 0:
            break
        lang, brace = opening.group(1).lower(), text.find("{", opening.end(), close)
        if lang in ("", "json", "json5", "jsonc") and brace >= 0:
            # balance over the whole text: a ``` inside a JSON string must not cut the object
            body = _balanced(text, brace)
            found.append((brace, body))
            if len(found) >= MAX_CANDIDATES:
                break
            if brace + len(body) > close:  # a ``` inside the object: the block ends after it
                close = text.find("```", brace + len(body))
                if close < 0:
                    break
        pos = text.find("```", close + 3)
    return found


def _nesting(body: str, limit: int) -> int:
    """How deep `{` and `[` nest in `body` outside JSON strings; stops once past `limit`."""
    return _scan(body, 0, limit)[1]


def _closes(body: str) -> bool:
    return _closing_brace(body, 0) is not None


def _balanced(text: str, start: int) -> str:
    """text[start:] up to the brace that closes text[start]; to the end when it never closes."""
    end = _closing_brace(text, start)
    return text[start:] if end is None else text[start : end + 1]


def _closing_brace(text: str, start: int) -> int | None:
    """Index of the brace (or bracket) that closes the one at text[start], skipping JSON
    strings."""
    return _scan(text, start)[0]


def _scan(text: str, start: int, depth_limit: int | None = None) -> tuple[int | None, int]:
    """Walk text[start:] outside JSON strings: (index of the brace that closes text[start] or
    None, the deepest nesting of `{` and `[` seen). Stops early once past `depth_limit`. An
    array at text[start] closes where the nesting returns to zero."""
    square = text.startswith("[", start)
    braces = nested = deepest = 0
    in_string = escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            braces += ch == "{"
            nested += 1
            deepest = max(deepest, nested)
            if depth_limit is not None and deepest > depth_limit:
                return None, deepest
        elif ch in "}]":
            nested -= 1
            braces -= ch == "}"
            if (nested == 0) if square else (ch == "}" and braces == 0):
                return i, deepest
    return None, deepest


def describe_validation_error(error: ValidationError, data: Any) -> str:
    """One line per problem, `path: what is wrong`, joined with '; '."""
    # Ordered and without repeats; a set, as a reply may carry many thousand errors.
    lines = list(dict.fromkeys(_describe(err, data) for err in error.errors(include_url=False)))
    shown = lines[:MAX_REPORTED_ERRORS]
    if len(lines) > len(shown):
        shown.append(f"and {len(lines) - len(shown)} more")
    return "; ".join(shown)


def _describe(err: Any, data: Any) -> str:
    kind, ctx = err["type"], err.get("ctx") or {}
    path = _path(err["loc"], data)
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        path = _join(path, str(ctx.get("discriminator", "")).strip("'"))
        if kind == "union_tag_not_found":
            return f"{path}: field required"
        return f"{path}: must be {_one_of(ctx.get('expected_tags', ''))}, got {ctx.get('tag')!r}"
    msg = _MESSAGES.get(kind) or _reword(err["msg"])
    value = err.get("input")
    if kind not in ("missing", "extra_forbidden") and _is_short_scalar(value):
        msg = f"{msg}, got {value!r}"
    return f"{path}: {msg}" if path else msg


_MESSAGES = {"missing": "field required", "extra_forbidden": "unknown field"}


def _reword(msg: str) -> str:
    msg = re.sub(r"^Input should be\b", "must be", msg)
    msg = re.sub(r"^Value error, ", "", msg)
    return msg[:1].lower() + msg[1:]


def _is_short_scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool) and len(repr(value)) <= 40


def _one_of(tags: str) -> str:
    # pydantic gives "'tool', 'final'"; models read "'tool' or 'final'" more easily
    parts = [t.strip() for t in tags.split(",") if t.strip()]
    if len(parts) <= 1:
        return tags
    return ", ".join(parts[:-1]) + " or " + parts[-1]


def _path(loc: tuple[Any, ...], data: Any) -> str:
    """Dotted path through the input: `delta[0].key`.

    pydantic also puts union member names (`add`, `function-after[...]`) in `loc`; walking the
    input alongside keeps only the steps the model actually wrote.
    """
    out = ""
    node = data
    for i, step in enumerate(loc):
        last = i == len(loc) - 1
        if isinstance(step, int) and isinstance(node, list) and 0 <= step < len(node):
            out, node = f"{out}[{step}]", node[step]
        elif isinstance(node, dict) and step in node:
            out, node = _join(out, str(step)), node[step]
        elif last and isinstance(step, str):
            out, node = _join(out, step), None
    return out


def _join(path: str, name: str) -> str:
    if not name:
        return path
    if len(name) > MAX_NAME_CHARS:  # a hostile key is named, not repeated
        name = f"{name[: MAX_NAME_CHARS - 1]}…({len(name):,} characters)"
    return f"{path}.{name}" if path else name
