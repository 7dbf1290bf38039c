"""Bounded tool results: any text longer than a page is served one page at a time."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from flowstate.errors import UsageError


@dataclass(frozen=True)
class Page:
    text: str
    page: int
    pages: int

    def render(self) -> str:
        """The page, with a last line telling the model how to get the next one."""
        if self.pages == 1:
            return self.text
        more = (
            f"call again with page={self.page + 1} for the rest"
            if self.page < self.pages
            else "last page"
        )
        return f"{self.text}\n\n[page {self.page} of {self.pages}; {more}]"


def page_of(text: str, page: int, size: int) -> Page:
    """Page `page` (from 1) of `text`, cut at line ends where a line fits in a page."""
    pages = _split(text, size)
    if not 1 <= page <= len(pages):
        raise UsageError(f"page {page} does not exist: there are {len(pages)} page(s)")
    return Page(pages[page - 1], page, len(pages))


def _split(text: str, size: int) -> list[str]:
    pages: list[str] = []
    current = ""
    for line in text.splitlines(keepends=True):
        while len(line) > size:  # a line longer than a page is cut where the page ends
            room = size - len(current)
            pages.append(current + line[:room])
            current, line = "", line[room:]
        if len(current) + len(line) > size:
            pages.append(current)
            current = ""
        current += line
    pages.append(current)
    return [p.rstrip("\n") for p in pages]


# What a page of items adds around them as JSON text (keys, brackets, the reasons).
_WRAPPER = 400


def pack(items: list[dict[str, Any]], size: int, *long_fields: str) -> list[list[dict[str, Any]]]:
    """`items` in pages whose JSON text stays within about `size` characters, in order. An
    item larger than a page comes in parts: its first long text field (of `long_fields`) is
    cut, each part marked `part` / `parts`."""
    room = max(200, size - _WRAPPER)
    pages: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] = []
    used = 0
    for item in items:
        n = _json_size(item)
        if current and used + n > room:
            pages.append(current)
            current, used = [], 0
        if n <= room:
            current.append(item)
            used += n
            continue
        field = next((f for f in long_fields if isinstance(item.get(f), str)), None)
        if field is None:  # nothing to cut: a page of its own
            pages.append([item])
            continue
        if current:
            pages.append(current)
            current, used = [], 0
        pages.extend([part] for part in _parts(item, field, room))
    if current:
        pages.append(current)
    return pages


def _parts(item: dict[str, Any], field: str, room: int) -> list[dict[str, Any]]:
    text: str = item[field]
    base = _json_size({**item, field: "", "part": 10**6, "parts": 10**6})
    chunks: list[str] = []
    start = 0
    while start < len(text):
        take = max(1, room - base)
        while take > 1 and base + _json_size(text[start : start + take]) > room:
            take = take * 3 // 4  # escaped characters take more room than they look
        chunks.append(text[start : start + take])
        start += take
    return [
        {**item, field: chunk, "part": k, "parts": len(chunks)} for k, chunk in enumerate(chunks, 1)
    ]


def _json_size(value: object) -> int:
    return len(json.dumps(value, indent=1, ensure_ascii=False))
