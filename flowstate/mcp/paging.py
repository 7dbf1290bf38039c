"""Bounded tool results: any text longer than a page is served one page at a time."""

from __future__ import annotations

from dataclasses import dataclass

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
