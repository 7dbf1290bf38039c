"""The step format a model writes without a JSON schema: one keyword line per item.

    ACCESS r3.budget r4
    ADD hotel decision "Casa Azul, 120 EUR a night" "Booked 3 nights..." DEPENDS_ON r3.budget
    TOOL book_hotel {"hotel": "H7"} CITES r3.budget
    SUMMARY Hotel booked in Lisbon
    FINAL Booked Casa Azul for 3 nights.

It says what the JSON step object says (`flowstate.models.step.StepOutput`) for a fraction of
the prompt: the format is described in a few protocol lines instead of a 700-token schema sent
with every call. An op's key and category are words, its summary and content JSON strings
(any character, any length), its relations `<TYPE> <target>` pairs and its evidence ids after
EVIDENCE; an op written as a JSON object (`ADD {"key": ...}`) is read too. Tool arguments stay
JSON, which models write reliably. Pure: no litellm, no I/O.

>>> text = 'ACCESS r2.budget\\nTOOL search {"city": "Lisbon"}'
>>> parse_lines(text).value.model_dump(exclude_defaults=True)["access"]
['r2.budget']
>>> parse_lines("FINAL").error
'line 1 (FINAL): the answer is empty'
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from flowstate.llm import parsing
from flowstate.llm.client import TextFormat
from flowstate.llm.parsing import ParseResult
from flowstate.models.step import AddOp, FinalAnswer, StepOutput, ToolCall, UpdateOp
from flowstate.models.vocab import RelationType

KEYWORDS = ("ADD", "UPDATE", "REMOVE", "ACCESS", "TOOL", "SUMMARY", "FINAL")
_ALTERNATIVES = "|".join(KEYWORDS)
# Blanks before a keyword, as providers send them: any space (a no-break one too) and the
# invisible zero-width ones and a byte order mark, never a line break.
_LEAD = r"(?:[^\S\n]|[\u200b-\u200d\u2060\ufeff])*"
_KEYWORD = re.compile(
    rf"{_LEAD}(?:(?:[-*]|\d{{1,3}}[.)])[ \t]*)?"  # a bullet or a list number, as models write them
    # In capitals, or in any case with a colon: prose such as "Final step: book it" is not
    # a FINAL line.
    rf"(?:({_ALTERNATIVES})\b:?|(?i:({_ALTERNATIVES})):)[ \t]*"
)
# A code fence line as Markdown writes one: three or more backticks or tildes, then an info
# string (backtick fences: without a backtick), then the line's end (CR and any blank).
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})([^\n]*)")
_IDS = re.compile(r"[^\s,;]+")
_NAME = re.compile(r"[^\s{}]+")
_SHOWN = 40  # characters of an unexpected line quoted back


class _Bad(ValueError):
    pass


@dataclass
class _Item:
    keyword: str
    line: int  # 1-based, in the reply
    payload: Any


def parse_lines(text: str) -> ParseResult[StepOutput]:
    """The step a keyword-line reply describes, or why it cannot be used (in a line the
    model can act on). Prose before the first keyword line is ignored, like prose around
    a JSON object."""
    if len(text) > parsing.MAX_REPLY_CHARS:
        n, limit = len(text), parsing.MAX_REPLY_CHARS
        return ParseResult(error=f"the reply has {n:,} characters; at most {limit:,}: be shorter")
    try:
        items = _items(text)
        data, where = _step_data(items)
    except _Bad as e:
        return ParseResult(error=str(e))
    bad = parsing.lone_surrogate(data)
    if bad is not None:
        return ParseResult(
            error=f"{_located(bad, where)}: text contains a lone surrogate (an unpaired "
            "\\ud800-\\udfff escape); send valid Unicode"
        )
    try:
        return ParseResult(value=StepOutput.model_validate(data))
    except ValidationError as e:
        return ParseResult(error=_located_errors(e, data, where))


def _items(text: str) -> list[_Item]:
    """Scan the reply: each keyword line and its payload (a JSON object may span lines)."""
    items: list[_Item] = []
    pos, n, number = 0, len(text), 1
    fences = 0  # fence lines between items: an odd count means the step is inside a fence
    while pos < n:
        end = text.find("\n", pos)
        end = n if end < 0 else end
        line = text[pos:end]
        match = _KEYWORD.match(line)
        stop = end
        if match is None:
            if _fence(line) is not None:
                fences += 1
            elif line.strip() and items:
                after = " after the step's closing fence" if fences and not fences % 2 else ""
                raise _Bad(
                    f"line {number}: expected a line starting with one of "
                    f"{', '.join(KEYWORDS)}{after}, got {_quoted(line)}"
                )
        else:
            keyword = (match.group(1) or match.group(2)).upper()
            start = pos + match.end()
            if keyword == "FINAL":
                stop = _answer_end(text, end, wrapped=fences % 2 == 1)
                answer = text[start:stop]
                items.append(_Item(keyword, number, _final_text(answer, fences % 2 == 1)))
            else:
                payload, stop = _payload(text, start, end, keyword, number)
                items.append(_Item(keyword, number, payload))
        number += 1 + text.count("\n", end, stop)  # a payload may span lines
        pos = stop + 1
    if not items:
        raise _Bad(
            "no step found: start each line with one of " + ", ".join(KEYWORDS) + " (see the "
            "reply format)"
        )
    return items


def _payload(text: str, start: int, end: int, keyword: str, number: int) -> tuple[Any, int]:
    """A keyword line's payload other than FINAL's, and where it ends in `text`."""
    if keyword in ("ADD", "UPDATE", "TOOL"):
        return _structured(text, start, end, keyword, number)
    return text[start:end].strip(), end


@dataclass(frozen=True)
class _Fence:
    mark: str  # ``` or ~~~, as long as it was written
    bare: bool  # no info string: it may close a block


def _fence(text: str, pos: int = 0, end: int | None = None) -> _Fence | None:
    """The fence text[pos:end] is, if the line is one."""
    found = _FENCE.fullmatch(text, pos, len(text) if end is None else end)
    if found is None:
        return None
    mark, info = found.group(1), found.group(2).strip()
    if mark[0] == "`" and "`" in info:
        return None  # inline code, not a fence
    return _Fence(mark, not info)


def _closes(opened: _Fence, fence: _Fence) -> bool:
    return fence.bare and fence.mark[0] == opened.mark[0] and len(fence.mark) >= len(opened.mark)


def _answer_end(text: str, end: int, *, wrapped: bool) -> int:
    """Where a FINAL answer whose first line ends at `end` ends: before the first later line,
    outside the answer's own code blocks, that is a keyword line in capitals and reads as
    one, or before the fence that closes a step written inside a fence (`wrapped`). Such
    lines after FINAL are items of the step, never text of the answer; "Summary: 3 nights"
    in mixed case is text."""
    # The answer's own fences come in pairs, so a wrapper's closing fence is the last of an
    # odd count.
    closing = _fence_lines(text, end) if wrapped else 0
    last, pos, seen = end, end + 1, 0
    inside: _Fence | None = None  # the answer's own code block open here
    while pos <= len(text):
        line_end = text.find("\n", pos)
        line_end = len(text) if line_end < 0 else line_end
        fence = _fence(text, pos, line_end)
        if fence is not None:
            seen += 1
            if inside is None and closing % 2 and seen == closing:
                return last
            if inside is None:
                inside = fence
            elif _closes(inside, fence):
                inside = None
        elif inside is None and _reads_as_item(text, pos, line_end):
            return last
        last, pos = line_end, line_end + 1
    return last


def _fence_lines(text: str, end: int) -> int:
    """How many fence lines follow the line that ends at `end`."""
    count, pos = 0, end + 1
    while pos <= len(text):
        line_end = text.find("\n", pos)
        line_end = len(text) if line_end < 0 else line_end
        count += _fence(text, pos, line_end) is not None
        pos = line_end + 1
    return count


def _reads_as_item(text: str, pos: int, end: int) -> bool:
    """Whether text[pos:end] starts a keyword line in capitals whose payload reads."""
    match = _KEYWORD.match(text, pos, end)
    if match is None or match.group(1) is None:
        return False
    keyword, start = match.group(1), match.end()
    if keyword == "FINAL":
        return bool(text[start:end].strip())
    try:
        payload, _ = _payload(text, start, end, keyword, 0)
    except _Bad:
        return False
    if keyword == "REMOVE":
        return len(payload.split()) == 1
    return bool(payload) if keyword in ("ACCESS", "SUMMARY") else True


def _structured(text: str, start: int, end: int, keyword: str, number: int) -> tuple[Any, int]:
    """The payload of ADD / UPDATE (a JSON object) or TOOL (name, JSON arguments, CITES ids),
    and where it ends in `text` (the end of its last line)."""
    where = f"line {number} ({keyword})"
    name = ""
    at = start
    if keyword == "TOOL":
        head = text[start:end]
        found = _NAME.match(head)
        if found is None or found.group(0).upper() == "CITES":
            raise _Bad(f"{where}: name the tool: TOOL <name> {{arguments}} CITES <ids>")
        name, at = found.group(0), start + found.end()
    brace = text.find("{", at)
    rest_of_line = text[at:end]
    if keyword != "TOOL" and not rest_of_line.lstrip().startswith("{"):
        return _terse_op(text, at, keyword, where)
    # Arguments may start on the next line, but not in a later item's line.
    if brace < 0 or (brace >= end and (rest_of_line.strip() or text[end:brace].strip())):
        return (name, {}, _cites(rest_of_line, where)), end
    if text[at:brace].strip():
        raise _Bad(f"{where}: unexpected {_quoted(text[at:brace])} before the JSON object")
    try:
        value = parsing.extract_object(text, brace)
    except ValueError as e:
        raise _Bad(f"{where}: {e}") from None
    stop = brace + len(parsing.balanced(text, brace))
    line_end = text.find("\n", stop)
    line_end = len(text) if line_end < 0 else line_end
    tail = text[stop:line_end]
    if keyword == "TOOL":
        return (name, value, _cites(tail, where)), line_end
    if tail.strip():
        raise _Bad(f"{where}: unexpected {_quoted(tail)} after the JSON object")
    return value, line_end


def _terse_op(text: str, at: int, keyword: str, where: str) -> tuple[dict[str, Any], int]:
    """`ADD <key> <category> "<summary>" <content> [<TYPE> <target>]... [EVIDENCE <ids>]` or
    `UPDATE <key> "<summary>" [<content>]` as the op's fields, and where it ends in `text`.
    Summary and content are JSON values (a quoted string, usually; null keeps one in UPDATE),
    so they may hold any character and span lines; a non-string content is kept as written."""
    usage = _TERSE_USAGE[keyword]
    words: list[str] = []
    pos = at
    for _ in range(2 if keyword == "ADD" else 1):
        pos = _skip_blanks(text, pos)
        found = _WORD.match(text, pos)
        if found is None:
            raise _Bad(f"{where}: expected {usage}")
        words.append(found.group(0).rstrip(":"))
        pos = found.end()
    values: list[Any] = []
    sources: list[str] = []
    while len(values) < 2:
        pos = _skip_blanks(text, pos)
        if pos >= len(text) or text[pos] in "\r\n":
            break
        if not _JSON_START.match(text, pos):
            name = ("summary", "content")[len(values)]
            raise _Bad(f"{where}: the {name} must be a quoted string: {usage}")
        try:
            value, end = parsing.load_value(text, pos)
        except ValueError as e:
            raise _Bad(f"{where}: {e}") from None
        values.append(value)
        sources.append(text[pos:end])
        pos = end
    if len(values) < (2 if keyword == "ADD" else 1):
        raise _Bad(f"{where}: expected {usage}")
    line_end = text.find("\n", pos)
    line_end = len(text) if line_end < 0 else line_end
    fields: dict[str, Any] = {"key": words[0]}
    if keyword == "ADD":
        fields["category"] = words[1]
    for name, value, source in zip(("summary", "content"), values, sources, strict=False):
        if value is not None or keyword == "ADD":
            # Not a string: kept as the model wrote it (re-encoding would round its numbers).
            fields[name] = value if isinstance(value, str) or value is None else source
    tail = text[pos:line_end]
    if keyword == "UPDATE":
        if tail.strip():
            raise _Bad(f"{where}: unexpected {_quoted(tail)} after the content")
    else:
        fields.update(_links(tail, where))
    return fields, line_end


_WORD = re.compile(r"[^\s\"{\[]+")
_JSON_START = re.compile(r'["{\[\d-]|true\b|false\b|null\b')
_TERSE_USAGE = {
    "ADD": 'ADD <key> <category> "<summary>" "<content>" [<TYPE> <target>]... [EVIDENCE <ids>]',
    "UPDATE": 'UPDATE <key> "<summary>" "<content>" (null keeps one)',
}
_RELATION_TYPES = {t.value for t in RelationType}


def _skip_blanks(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    return pos


def _links(tail: str, where: str) -> dict[str, list[Any]]:
    """The relations (`<TYPE> <target>`) and evidence (`EVIDENCE <ids>`) after an ADD's
    content."""
    relations: list[dict[str, str]] = []
    evidence: list[str] = []
    words = _IDS.findall(tail)
    i, in_evidence = 0, False
    while i < len(words):
        word = words[i]
        upper = word.upper()
        if upper in _RELATION_TYPES:
            if i + 1 >= len(words):
                raise _Bad(f"{where}: {upper} needs a target id after it")
            relations.append({"type": upper, "target": words[i + 1]})
            i, in_evidence = i + 2, False
            continue
        if upper.rstrip(":") == "EVIDENCE":
            in_evidence = True
        elif in_evidence:
            evidence.append(word)
        else:
            raise _Bad(
                f"{where}: after the content expected <TYPE> <target> or EVIDENCE <ids>, "
                f"got {_quoted(word)}; TYPE is one of {', '.join(sorted(_RELATION_TYPES))}"
            )
        i += 1
    out: dict[str, list[Any]] = {}
    if relations:
        out["relations"] = relations
    if evidence:
        out["evidence"] = evidence
    return out


def _cites(tail: str, where: str) -> list[str]:
    words = tail.split(None, 1)
    if not words:
        return []
    if words[0].upper().rstrip(":") != "CITES":
        raise _Bad(f"{where}: expected CITES <ids> after the arguments, got {_quoted(tail)}")
    return _IDS.findall(words[1]) if len(words) > 1 else []


def _final_text(answer: str, wrapped: bool) -> str:
    text = answer.strip()
    if wrapped:
        return text  # the wrapper's closing fence already ended the answer
    # A closing fence left unpaired in the answer is the wrapper's; a code block of the
    # answer keeps its own.
    lines = text.split("\n")
    inside: _Fence | None = None  # the block open after each line, fences paired as Markdown
    for line in lines:
        fence = _fence(line)
        if fence is not None:
            inside = fence if inside is None else (None if _closes(inside, fence) else inside)
    if inside is not None and inside.bare and _fence(lines[-1]) == inside:
        return "\n".join(lines[:-1]).strip()  # a bare fence left open on the last line
    return text


def _step_data(items: list[_Item]) -> tuple[dict[str, Any], dict[str, str]]:
    """The JSON step object the items describe, and where each part came from (for errors)."""
    delta: list[Any] = []
    access: list[str] = []
    action: dict[str, Any] | None = None
    summary: _Item | None = None
    where: dict[str, str] = {}
    for item in items:
        label = f"line {item.line} ({item.keyword})"
        if item.keyword in ("ADD", "UPDATE"):
            where[f"delta[{len(delta)}]"] = label
            fields = _object(item.payload, label)
            if "op" in fields:
                raise _Bad(f"{label}: op: the keyword says which op; leave the field out")
            delta.append({"op": item.keyword.lower(), **fields})
        elif item.keyword == "REMOVE":
            key = item.payload
            if not key or len(key.split()) != 1:
                raise _Bad(f"{label}: expected REMOVE <key>")
            where[f"delta[{len(delta)}]"] = label
            delta.append({"op": "remove", "key": key})
        elif item.keyword == "ACCESS":
            access += _IDS.findall(item.payload)
        elif item.keyword == "SUMMARY":
            if summary is not None:
                raise _Bad(
                    f"{label}: a second SUMMARY (the first is on line {summary.line}): write one"
                )
            summary = item
        else:
            if action is not None:
                raise _Bad(f"{label}: one action per step (a TOOL or a FINAL), not two")
            where["action"] = label
            action = _action(item, label)
    if summary is not None:
        if action is None or action["type"] != "final":
            raise _Bad(f"line {summary.line} (SUMMARY): a summary goes with a FINAL answer")
        action["summary"] = summary.payload
    data: dict[str, Any] = {"delta": delta, "access": access}
    if action is not None:
        data["action"] = action
    return data, where


def _action(item: _Item, label: str) -> dict[str, Any]:
    if item.keyword == "FINAL":
        if not item.payload:
            raise _Bad(f"{label}: the answer is empty")
        return {"type": "final", "answer": item.payload}
    name, arguments, cites = item.payload
    return {"type": "tool", "name": name, "arguments": arguments, "cites": cites}


def _object(value: Any, label: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Bad(f"{label}: expected a JSON object")
    return value


def _located(path: str, where: dict[str, str]) -> str:
    """`delta[1].summary` as `line 3 (ADD): summary`."""
    for prefix, label in where.items():
        if path == prefix or path.startswith(prefix + "."):
            rest = path[len(prefix) :].lstrip(".")
            return f"{label}: {rest}" if rest else label
    return path


def _located_errors(error: ValidationError, data: Any, where: dict[str, str]) -> str:
    described = parsing.describe_validation_error(error, data)
    parts = []
    for part in described.split("; "):
        path, sep, message = part.partition(": ")
        parts.append(f"{_located(path, where)}{sep}{message}" if sep else part)
    return "; ".join(parts)


def _quoted(text: str) -> str:
    text = text.strip()
    return repr(text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…")


# --- writing the format (scripted models, replays) ------------------------------------------


def render_lines(step: StepOutput) -> str:
    """`step` in the keyword-line format (what a model following the protocol writes)."""
    lines = [f"ACCESS {' '.join(step.access)}"] if step.access else []
    for op in step.delta:
        if op.op == "remove":
            lines.append(f"REMOVE {op.key}")
        else:
            fields = op.model_dump(exclude={"op"}, exclude_defaults=True)
            lines.append(_terse_line(op) or f"{op.op.upper()} {_compact(fields)}")
    action = step.action
    if isinstance(action, ToolCall):
        line = f"TOOL {action.name} {_compact(action.arguments)}"
        lines.append(line + (f" CITES {' '.join(action.cites)}" if action.cites else ""))
    elif isinstance(action, FinalAnswer):
        if action.summary:
            lines.append(f"SUMMARY {action.summary}")
        lines.append(f"FINAL {action.answer}")
    return "\n".join(lines)


def _terse_line(op: AddOp | UpdateOp) -> str | None:
    """The op in the terse form, or None where a word of it would not read back as one (a
    key with a space in it, an id that is a keyword): the JSON form says it exactly."""
    if isinstance(op, UpdateOp):
        words = [op.key]
        tail = [_compact(op.summary)] + ([_compact(op.content)] if op.content is not None else [])
    else:
        words = [op.key, op.category.value]
        tail = [_compact(op.summary), _compact(op.content)]
        for r in op.relations:
            words.append(r.target)
            tail += [r.type.value, r.target]
        if op.evidence:
            words += op.evidence
            tail += ["EVIDENCE", *op.evidence]
    if not all(_plain_word(w) for w in words):
        return None
    head = " ".join([op.key] + ([op.category.value] if isinstance(op, AddOp) else []))
    return f"{op.op.upper()} {head} {' '.join(tail)}"


def _plain_word(word: str) -> bool:
    return (
        bool(_WORD.fullmatch(word))
        and _IDS.fullmatch(word) is not None
        and not word.endswith(":")
        and word.upper().rstrip(":") not in (*_RELATION_TYPES, "EVIDENCE")
    )


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def parse_step_reply(text: str) -> ParseResult[StepOutput]:
    """A step in either format: keyword lines, or the JSON step object (a model may answer in
    JSON although the protocol asks for lines; both say the same)."""
    if len(text) > parsing.MAX_REPLY_CHARS:
        return parse_lines(text)  # refused for its size, before any scan
    keyword_line = _first_keyword_line(text)
    if keyword_line is None:
        # A reply with neither a JSON object nor keyword lines is told to write the lines.
        return parsing.parse_step(text, StepOutput) if "{" in text else parse_lines(text)
    spans = parsing.object_spans(text, keyword_line)
    if any(end > keyword_line and _json_like(text, start) for start, end in spans):
        # The "keyword line" is inside a JSON object (a string spanning lines, or an object
        # never closed): the reply is JSON, and a broken one is told so.
        return parsing.parse_step(text, StepOutput)
    if any(_is_step_object(text, start) for start, _ in spans):
        return ParseResult(
            error="the reply has a JSON step object and keyword lines: write the step one "
            "way, in keyword lines"
        )
    return parse_lines(text)


def _json_like(text: str, brace: int) -> bool:
    """Whether the {...} at text[brace] closes, or opens as a JSON object does (`{"`): an
    unclosed `{` in prose is not the start of a truncated step object."""
    body = parsing.balanced(text, brace)
    return body.endswith("}") or _JSON_OPENING.match(text, brace) is not None


_JSON_OPENING = re.compile(r'\{\s*"')


def _is_step_object(text: str, brace: int) -> bool:
    """Whether the {...} at text[brace] is a JSON object with a field of the step object."""
    try:
        value = parsing.extract_object(text, brace)
    except ValueError:
        return False
    return bool(set(value) & set(StepOutput.model_fields))


def _first_keyword_line(text: str) -> int | None:
    """Where the first line that starts with a step keyword starts, if one does."""
    pos = 0
    while pos <= len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        if _KEYWORD.match(text, pos, end):
            return pos
        pos = end + 1
    return None


# The reply format of `ReplyFormat.LINES`: nothing is sent beside the messages.
STEP_LINES: TextFormat[StepOutput] = TextFormat(StepOutput, parse_step_reply)
