"""The scenario every framework adapter runs, written once: what the user says in three
requests, what the scripted model does at each turn, and the same steps through the session
API, so that the stored graphs can be compared.

A turn is a list of tool calls (name, arguments) the model makes at once, or its final text.
"""

from __future__ import annotations

import json
from typing import Any

from flowstate import FlowState

Call = tuple[str, dict[str, Any]]
Turn = list[Call] | str

BUDGET_CONTENT = "At most 150 EUR per night, taxes included"
BUDGET = {
    "op": "add",
    "key": "budget",
    "category": "constraint",
    "summary": "Hotel budget 150 EUR a night",
    "content": BUDGET_CONTENT,
}
HOTELS_OUTPUT = "H1 Casa Azul 120 EUR; H2 Palacio Verde 145 EUR; H3 Grand 210 EUR"
OPTIONS = {
    "op": "add",
    "key": "options",
    "category": "environment",
    "summary": "3 hotels in Lisbon: 120, 145 and 210 EUR",
    "content": HOTELS_OUTPUT,
    "evidence": ["r2.o1"],
}

FIRST = "Our hotel budget is 150 EUR a night."
SECOND = "Which hotels are there in Lisbon?"
THIRD = "Book the best hotel in Lisbon that fits what we said."

REQUESTS: list[tuple[str, list[Turn]]] = [
    (FIRST, [[("memory_record", {"delta": [BUDGET], "summary": "Hotel budget"})], "Noted."]),
    (
        SECOND,
        [
            [("search_hotels", {"city": "Lisbon"})],
            [("memory_record", {"delta": [OPTIONS]})],
            "Casa Azul (120 EUR), Palacio Verde (145 EUR) and the Grand (210 EUR).\nAsk me more.",
        ],
    ),
    (
        THIRD,
        [
            [("memory_reveal", {"ids": ["r1.budget"]})],
            [("book_hotel", {"hotel_id": "H2", "cites": []})],
            [("book_hotel", {"hotel_id": "H2", "cites": ["r1.budget"]})],
            "Booked Palacio Verde, 145 EUR a night.",
        ],
    ),
]


def search_hotels(city: str) -> str:
    """Hotels in a city, with their nightly price."""
    return HOTELS_OUTPUT


def book_hotel(hotel_id: str) -> str:
    """Book a hotel by its id."""
    return f"booked {hotel_id}"


def replay(fs: FlowState) -> None:
    """The scenario's steps through the session API, as a host of its own would call it."""
    first = fs.begin(FIRST)
    first.record([BUDGET])
    first.commit("Noted.", "Hotel budget")

    second = fs.begin(SECOND)
    second.observe("search_hotels", {"city": "Lisbon"}, HOTELS_OUTPUT)
    second.record([OPTIONS])
    answer = REQUESTS[1][1][-1]
    assert isinstance(answer, str)
    second.commit(answer, answer.splitlines()[0])

    third = fs.begin(THIRD)
    third.reveal(["r1.budget"])
    assert not third.guard("book_hotel", {"hotel_id": "H2"}, []).approved
    assert third.guard("book_hotel", {"hotel_id": "H2"}, ["r1.budget"]).approved
    third.observe("book_hotel", {"hotel_id": "H2"}, "booked H2")
    answer = "Booked Palacio Verde, 145 EUR a night."
    third.commit(answer, answer)  # no summary given: the answer's first line


def graph(fs: FlowState) -> list[dict[str, Any]]:
    """The namespace's stored graph, without what differs between two runs of the same steps
    (times, the handle's hash)."""
    rows = []
    for line in fs.export_jsonl():
        row = json.loads(line)
        for name in ("started_at", "finished_at", "created_at", "updated_at", "handle_hash"):
            row.pop(name, None)
        rows.append(row)
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))


def opened_only_when_revealed(prompts: list[str]) -> None:
    """The third request's prompts: the first request's state shows as its index line first,
    and its content only once the model opened it."""
    first, after_reveal = prompts[0], prompts[1]
    assert "r1.budget [constraint] Hotel budget 150 EUR a night" in first
    assert BUDGET_CONTENT not in first
    assert BUDGET_CONTENT in after_reveal
