"""What a docs example promises to print, and whether a run printed it.

A Python block of README.md or docs/ says what each `print(...)` prints in `#>` comments, on
the call's last line or on the lines right after it:

    print(result.request_id, result.outcome)   #> r1 answered
    print(fs.index().text)
    #> r1: Hotel search in Lisbon
    #>   r1.budget [constraint] Hotel budget 150 EUR a night

`...` stands for any text within a line; a line that is only `...` for any lines, or none.
The ids are those of a new
namespace: on a later run in the same namespaces a request id (`r1`, in `r1.budget` too) may
be another (`r2`), and everything else must still match.
"""

from __future__ import annotations

import ast
import builtins
import io
import re
import sys
import tokenize
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

PROMPT = "#>"
REQUEST_ID = re.compile(r"(?<![A-Za-z0-9_])r\d+(?![0-9])")


@dataclass(frozen=True)
class Promise:
    """One print call of a block (lines 1-based within the block) and what it promises."""

    first: int
    last: int
    text: str | None  # None: the call promises nothing


@dataclass
class Promises:
    calls: list[Promise]
    stray: list[int] = field(default_factory=list)  # `#>` lines that follow no print


def promises(source: str) -> Promises:
    """The print calls of a block's source, each with its `#>` lines."""
    tree = ast.parse(source)
    spans = sorted(
        (node.lineno, node.end_lineno or node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "print"
    )
    said: dict[int, tuple[str, bool]] = {}  # line -> (text, after code on the same line)
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and token.string.startswith(PROMPT):
            inline = token.line[: token.start[1]].strip() != ""
            text = token.string[len(PROMPT) :].removeprefix(" ").rstrip()
            said[token.start[0]] = (text, inline)
    used: set[int] = set()
    calls = []
    for first, last in spans:
        lines = []
        if last in said and said[last][1]:
            lines.append(said[last][0])
            used.add(last)
        below = last + 1
        while below in said and not said[below][1]:
            lines.append(said[below][0])
            used.add(below)
            below += 1
        calls.append(Promise(first, last, "\n".join(lines) if lines else None))
    return Promises(calls, sorted(set(said) - used))


class Printed:
    """A `print` for a block's globals that keeps what each line of the block printed."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.by_line: dict[int, list[str]] = {}

    def __call__(
        self, *args: Any, sep: str | None = " ", end: str | None = "\n", **kw: Any
    ) -> None:
        if kw.get("file") not in (None, sys.stdout):
            builtins.print(*args, sep=sep, end=end, **kw)
            return
        out = io.StringIO()
        builtins.print(*args, sep=sep, end=end, file=out)
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename != self.filename:
            frame = frame.f_back  # type: ignore[assignment]
        line = frame.f_lineno if frame is not None else 0
        self.by_line.setdefault(line, []).append(out.getvalue())
        builtins.print(*args, sep=sep, end=end)  # still shown when a test fails

    def of(self, promise: Promise) -> str | None:
        """What the call printed in this run (all its calls, in order), or None if it never
        ran."""
        parts = [
            text
            for line in range(promise.first, promise.last + 1)
            for text in self.by_line.get(line, [])
        ]
        return "".join(parts) if parts else None


def matches(promised: str, printed: str, *, fresh: bool, renamed: Mapping[str, str]) -> bool:
    """Whether `printed` is what `promised` says, with the namespaces as the run renamed them;
    in a namespace that is not new (`fresh=False`), any request id stands for any other."""
    for old, new in renamed.items():
        promised = re.sub(rf"(?<![\w.-]){re.escape(old)}(?![\w.-])", new, promised)
    wanted = [
        None if line.strip() == "..." else _line(line.rstrip(), fresh)
        for line in promised.split("\n")
    ]
    return _match(wanted, [line.rstrip() for line in printed.rstrip("\n").split("\n")])


def _line(text: str, fresh: bool) -> re.Pattern[str]:
    """One promised line: `...` is any text, and a request id any other unless `fresh`."""
    pieces = [re.escape(piece) for piece in text.split("...")]
    if not fresh:
        pieces = [REQUEST_ID.sub(r"r\\d+", piece) for piece in pieces]
    return re.compile(".*?".join(pieces))


def _match(wanted: list[re.Pattern[str] | None], lines: list[str]) -> bool:
    """Line by line; None (a `...` line) takes any number of lines, none included."""
    if not wanted:
        return not lines
    first, rest = wanted[0], wanted[1:]
    if first is None:
        return any(_match(rest, lines[skip:]) for skip in range(len(lines) + 1))
    return bool(lines) and first.fullmatch(lines[0]) is not None and _match(rest, lines[1:])
