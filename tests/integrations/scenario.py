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

BUDGET_CONTENT = "At most 150 EUR per night, taxes included, breakfast not required"
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
THIRD = "Book the best place in Lisbon that fits what we said."

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


# A hostile model's turns in a request of their own, each refused with its reason.
HOSTILE_TEXT = "Change our budget to 9 EUR"
HOSTILE: list[Turn] = [
    [("memory_record", {"delta": [{"op": "update", "key": "r1.budget", "summary": "9"}]})],
    [("memory_reveal", {"ids": ["r9.secret"]})],
    [("memory_search", {"query": "budget", "namespace": "someone_else"})],
    [("memory_record", {"delta": [{"op": "add", "key": "x", "category": "password"}]})],
    [("book_hotel", {"hotel_id": "H1", "cites": "r1.budget"})],
    [("book_hotel", {"hotel_id": "H1", "cites": ["r9.invented"]})],
    "I could not do any of that.",
]


def hostile_refused(fs: FlowState, told: list[str]) -> None:
    """What the model was told after each of HOSTILE's turns (`told`, in order), and that the
    namespace holds only what the first request stored, with the refused booking recorded."""
    assert "delta rejected, nothing applied" in told[0]
    assert "nothing opened: access r9.secret: unknown id" in told[1]
    assert "namespace: Extra inputs are not permitted" in told[2]
    assert "invalid arguments: delta.0.add.category: Input should be" in told[3]
    assert "cites: a list of state ids" in told[4]
    reason = "book_hotel: cited ids are not in the Active State: r9.invented"
    assert f"denied (do not run book_hotel): {reason}" in told[5]
    [_, second] = fs.history()
    assert second.answer == "I could not do any of that."
    assert fs.reveal(["r1.budget"])[0].state.summary == "Hotel budget 150 EUR a night"
    exported = [json.loads(line) for line in fs.export_jsonl()]
    assert [r["id"] for r in exported if r["kind"] == "state"] == ["r1.budget"]
    decisions = [r for r in exported if r["kind"] == "decision"]
    assert [(d["approved"], d["reason"]) for d in decisions] == [(False, reason)]


def third_request_as_the_session_api(
    prompts: list[str], tools: dict[str, Any], fs: FlowState, twin: FlowState
) -> None:
    """The third request as the framework ran it: the state opened only when revealed, the
    booking tool guarded (it takes `cites`, a search does not), the refusal and the kept
    result told to the model; and the graph stored, what the session API stores for the same
    steps (replayed into `twin`)."""
    opened_only_when_revealed(prompts)
    booking = tools["book_hotel"]
    assert "cites" in booking["properties"] and "cites" in booking["required"]
    assert "cites" not in tools["search_hotels"]["properties"]
    assert "denied (do not run book_hotel): book_hotel is consequential" in prompts[2]
    assert "booked H2\n[kept as r3.o1: cite it as evidence]" in prompts[3]
    replay(twin)
    assert graph(fs) == graph(twin)
    assert [r.summary for r in fs.history()] == [r.summary for r in twin.history()]


# One model turn with parallel calls: two searches, a cited booking and one without cites.
PARALLEL_TEXT = "Search Lisbon and Porto, and book"
PARALLEL: list[Turn] = [
    [("memory_reveal", {"ids": ["r1.budget"]})],
    [
        ("search_hotels", {"city": "Lisbon"}),
        ("search_hotels", {"city": "Porto"}),
        ("book_hotel", {"hotel_id": "H1", "cites": ["r1.budget"]}),
        ("book_hotel", {"hotel_id": "H3", "cites": []}),
    ],
    "Booked H1.",
]


def parallel_each_kept_and_guarded(fs: FlowState, shown: str) -> None:
    """After PARALLEL's second turn (`shown`, the next prompt): each call that ran is kept,
    each booking was guarded on its own."""
    assert shown.count("[kept as r2.o") == 3  # two searches and the approved booking
    assert shown.count("denied (do not run book_hotel)") == 1
    exported = [json.loads(line) for line in fs.export_jsonl()]
    decisions = [r for r in exported if r["kind"] == "decision"]
    verdicts = sorted((json.loads(d["arguments"])["hotel_id"], d["approved"]) for d in decisions)
    assert verdicts == [("H1", True), ("H3", False)]


RESUMED_ANSWER = "Booked, after the restart."


def resumed_as_left(fs: FlowState, request_id: str, first_prompt: str) -> None:
    """A run killed mid-way and resumed: its first prompt holds what it recorded before the
    crash, and it committed under its first text with the resumed run's answer."""
    assert "picked up where it stopped" in first_prompt
    assert BUDGET_CONTENT in first_prompt  # recorded before the crash
    [request] = fs.history()
    assert (request.id, request.text, request.answer) == (request_id, FIRST, RESUMED_ANSWER)
    assert fs.reveal(["r1.budget"])[0].state.content == BUDGET_CONTENT
    assert fs.pending() == []
