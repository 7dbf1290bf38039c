"""The purchase a shopping step's final observation reports, read as MemoryArena's runner reads
it (the ASIN and the price that its reward code then scores).

The runner knows three layouts and takes the first purchase of the first layout present:

1. step-reward lines, anywhere in a line, in any case: `#1 ASIN=B0X Price=$1,299.99 Reward=0.5`
   (`Price=N/A` is no price; the ASIN may be `UNKNOWN`, which stays a purchase of an unknown
   product);
2. target blocks: `Target 1: ...` at a line's start opens a block, and a later
   `Purchased: B0X ($12.99)` line in it (ASIN in capitals, the price optional) records that
   block's purchase; the first block with a purchase wins;
3. purchase lines: `Purchase #1: B0X ($12.99)` (ASIN in capitals, the price required), on
   any line but a block's opening one.

A price is its digits with the thousands commas removed; text that is then no number (`1.2.3`,
`,`) is no price. Nothing found is no purchase.

>>> purchase_in("WEBSHOPPLUS TASK COMPLETED\\n  Purchase #1: B0FX000101 ($1,299.50)")
('B0FX000101', 1299.5)
>>> purchase_in("#1 ASIN=UNKNOWN Price=N/A Reward=0")
('UNKNOWN', None)
"""

from __future__ import annotations

import re

STEP_LINE = re.compile(
    r"#\s*(\d+)\s+ASIN=([A-Z0-9]+)\s+Price=\$?([\d.,]+|N/A)\s+Reward=[+\-]?\d+\.?\d*",
    re.IGNORECASE,
)
TARGET = re.compile(r"Target\s+\d+:", re.IGNORECASE)
PURCHASED = re.compile(r"Purchased:\s*([A-Z0-9]{10})(?:\s*\(\$([\d.,]+)\))?")
PURCHASE_LINE = re.compile(r"Purchase #\d+:\s*([A-Z0-9]{10})\s*\(\$([\d.,]+)\)")

Purchase = tuple[str | None, float | None]


def price_of(text: str) -> float | None:
    """`1,299.99` -> 1299.99; `N/A` or what is no number after the commas go -> None."""
    if text.upper() == "N/A":
        return None
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _step_lines(lines: list[str]) -> Purchase | None:
    for line in lines:
        if found := STEP_LINE.search(line):
            return found.group(2), price_of(found.group(3))
    return None


def _targets(lines: list[str]) -> Purchase | None:
    blocks: list[Purchase] = []  # (ASIN, price) per block, in order
    for line in lines:
        if TARGET.match(line):
            blocks.append((None, None))
        elif blocks and (found := PURCHASED.search(line)):
            # A later Purchased line of the block replaces the ASIN; its price only if it has one.
            price = price_of(found.group(2)) if found.group(2) else blocks[-1][1]
            blocks[-1] = (found.group(1), price)
    return next((block for block in blocks if block[0]), None)


def _purchase_lines(lines: list[str]) -> Purchase | None:
    for line in lines:
        if TARGET.match(line):
            continue  # a block's opening line is read as nothing else
        if found := PURCHASE_LINE.search(line):
            return found.group(1), price_of(found.group(2))
    return None


def purchase_in(text: str) -> Purchase:
    """(ASIN, price) of the purchase `text` reports; (None, None) when it reports none."""
    lines = _lines(text)
    return _step_lines(lines) or _targets(lines) or _purchase_lines(lines) or (None, None)
