"""Counted nouns for what people and models read: `1 node`, `2 nodes`, never `1 nodes`."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`counted(1, "node")` is `1 node`; `counted(3, "node")` is `3 nodes`; an irregular
    plural is given: `counted(2, "entry", "entries")`."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
