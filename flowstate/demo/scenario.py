"""The demo: a group trip planned over eight requests to one agent.

Later requests depend on what earlier ones established: dates and tastes from the first,
a budget that changes, a traveller who joins with an accessibility need, a booking that must be
respected. The scripted planner reads only the prompt (through `view.parse`): it finds ids in
the index, asks for them, and decides from the revealed content, so a wrong or missing memory
shows up as a wrong answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import date
from typing import Any

from flowstate.demo.view import PromptView, parse

REQUESTS = [
    "Hi, I'm Ana. I'm planning a trip to Lisbon from 12 to 15 June 2027. I love small boutique "
    "hotels, and I'm vegetarian.",
    "Our hotel budget is 150 EUR per night. What are the options?",
    "My friend Ben is joining us. He uses a wheelchair, so everything must be step-free.",
    "Great, please book the hotel you recommend for both of us.",
    "Money is tighter now: the hotel budget is 120 EUR per night from now on. Do we need to "
    "change anything?",
    "Find us flights from Berlin on the first day, arriving before noon.",
    "Book a dinner for our first evening close to the hotel.",
    "Summarise the whole plan with the total cost for the group.",
]


def _j(value: Any) -> str:
    """A state's content: a string as it is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def add(key: str, category: str, summary: str, content: Any, relations=(), evidence=()) -> dict:  # noqa: ANN001
    return {
        "op": "add",
        "key": key,
        "category": category,
        "summary": summary,
        "content": _j(content),
        "relations": [{"type": t, "target": x} for t, x in relations],
        "evidence": list(evidence),
    }


def final(answer: str, summary: str = "") -> dict:
    """The answer, and the request's one-line summary: none where the request adds one state,
    whose summary then says what the request did."""
    return {"action": {"type": "final", "answer": answer, "summary": summary}}


def tool(name: str, cites=(), **arguments: Any) -> dict:  # noqa: ANN001
    return {"type": "tool", "name": name, "arguments": arguments, "cites": list(cites)}


def needs(v: PromptView, *keys: str, cited: bool = False) -> dict | None:
    """Access the current states of these keys unless they are all revealed already (or, when
    they are only read, not `cited`, shown whole on their index lines)."""
    seen = v.revealed if cited else v.revealed | v.inline
    missing = [v.current(k) for k in keys if v.current(k) not in seen]
    if None in missing:
        if not v.collapsed:
            raise LookupError(f"the index lacks one of {keys}")
        # Older requests are collapsed in the index: list their states, newest first.
        newest = sorted(v.collapsed, key=lambda r: int(r[1:]), reverse=True)
        return {"access": newest[:8]}
    return {"access": missing} if missing else None


def keeping(v: PromptView, step: dict, *keys: str) -> dict:
    """`step` with the states of `keys` opened too where later calls will not show the index
    (the protocol says so): the request's later steps read them."""
    if not v.index_once:
        return step
    kept = [sid for k in keys if (sid := v.current(k)) and sid not in v.revealed]
    access = [*step.get("access", []), *(k for k in kept if k not in step.get("access", []))]
    return {**step, "access": access} if access else step


def ran(v: PromptView, tool_name: str) -> bool:
    return tool_name in {t for t, _ in v.observations.values()}


# What later requests read off index lines, as the summaries below write them.
_TRIP = re.compile(r"^(?P<city>[^,]+), (?P<check_in>[\d-]+) to (?P<check_out>[\d-]+)")
_BOOKING = re.compile(
    r"^Booked (?P<hotel>.+) \((?P<district>[^)]+)\) (?P<check_in>[\d-]+)\.\.(?P<check_out>"
    r"[\d-]+), (?P<price_per_night>\d+) EUR/night, ref (?P<ref>\S+)$"
)
_FLIGHT = re.compile(r"^Flight (?P<id>\w+) .*, (?P<price>\d+) EUR pp$")
_DINNER = re.compile(
    r"^Dinner (?P<date>[\d-]+) at (?P<name>.+) \((?P<price_per_person>\d+) EUR pp\)$"
)


def read(v: PromptView, key: str, pattern: re.Pattern[str]) -> dict[str, Any]:
    """The fields an index line's summary carries (LookupError when it does not)."""
    found = pattern.match(v.summary(key))
    if found is None:
        raise LookupError(f"the index line of {key} does not read as expected")
    return {k: int(x) if x.isdigit() else x for k, x in found.groupdict().items()}


def trip_of(v: PromptView) -> dict[str, Any]:
    return read(v, "trip", _TRIP)


def travellers_of(v: PromptView) -> list[str]:
    return v.summary("travellers").removeprefix("Travellers: ").split(", ")


def nights(check_in: str, check_out: str) -> int:
    return (date.fromisoformat(check_out) - date.fromisoformat(check_in)).days


def plan_text(booking: dict, nights: int, flight: dict, dinner: dict, n: int) -> str:
    """The closing plan, both agents' words: the bookings and the group's total."""
    hotel = booking["price_per_night"] * nights
    total = hotel + flight["price"] * n + dinner["price_per_person"] * n
    return (
        f"{n} travellers; hotel {booking['hotel']} ({booking['ref']}) {hotel} EUR; flight "
        f"{flight['id']} {flight['price'] * n} EUR; dinner at {dinner['name']} "
        f"{dinner['price_per_person'] * n} EUR; total {total} EUR"
    )


def r1(v: PromptView) -> dict:
    return {
        "delta": [
            add(
                "trip",
                "constraint",
                "Lisbon, 2027-06-12 to 2027-06-15 (3 nights)",
                {"city": "Lisbon", "check_in": "2027-06-12", "check_out": "2027-06-15"},
            ),
            add("travellers", "constraint", "Travellers: Ana", ["Ana"]),
            add("hotel_style", "preference", "Prefers small boutique hotels", "boutique"),
            add("diet", "preference", "Ana is vegetarian", {"vegetarian": ["Ana"]}),
        ],
        **final(
            "Noted: Lisbon, 12-15 June 2027, boutique hotels, vegetarian food.",
            "Trip basics: Lisbon 12-15 June, boutique, vegetarian",
        ),
    }


def r2(v: PromptView) -> dict:
    city, style = trip_of(v)["city"], v.summary("hotel_style")
    style = next(s for s in ("boutique", "business", "hostel") if s in style)
    if not ran(v, "search_hotels"):
        return keeping(
            v,
            {
                "delta": [add("budget", "constraint", "Hotel budget 150 EUR/night", 150)],
                "action": tool("search_hotels", city=city, max_price_per_night=150, style=style),
            },
            "trip",
            "hotel_style",
        )
    hotels = v.last_output("search_hotels")
    names = ", ".join(f"{h['name']} ({h['price_per_night']} EUR)" for h in hotels)
    kept = ("id", "name", "district", "price_per_night", "step_free")
    return {
        "delta": [
            add(
                "hotel_options",
                "environment",
                f"{len(hotels)} {style} hotels fit: {names}",
                [{k: h[k] for k in kept} for h in hotels],
                [("DEPENDS_ON", "budget"), ("DEPENDS_ON", v.current("hotel_style"))],
                [v.last_observation("search_hotels")],
            )
        ],
        **final(f"Options within 150 EUR/night: {names}.", "Hotel budget and options"),
    }


def r3(v: PromptView) -> dict:
    if step := needs(v, "hotel_options"):
        return keeping(v, step, "travellers")
    options, people = v.content("hotel_options"), travellers_of(v)
    pick = min((h for h in options if h["step_free"]), key=lambda h: h["price_per_night"])
    return {
        "delta": [
            add(
                "travellers",
                "constraint",
                f"Travellers: {', '.join([*people, 'Ben'])}",
                [*people, "Ben"],
                [("SUPERSEDES", v.current("travellers"))],
            ),
            add(
                "step_free",
                "constraint",
                "Everything must be step-free (Ben uses a wheelchair)",
                True,
            ),
            add(
                "hotel_choice",
                "decision",
                f"Recommend {pick['name']}: the step-free boutique option",
                pick,
                [("DEPENDS_ON", "step_free"), ("DERIVED_FROM", v.current("hotel_options"))],
            ),
        ],
        **final(
            f"{pick['name']} in {pick['district']} is step-free and {pick['price_per_night']} "
            "EUR/night; I recommend it.",
            "Ben joins; step-free hotel chosen",
        ),
    }


def r4(v: PromptView) -> dict:
    # A consequential call cites states that are open: what the booking relies on.
    if step := needs(v, "hotel_choice", "travellers", "trip", cited=True):
        return step
    hotel, trip = v.content("hotel_choice"), trip_of(v)
    if not ran(v, "hotel_details"):
        return {"action": tool("hotel_details", hotel_id=hotel["id"])}
    cites = [v.current(k) for k in ("hotel_choice", "travellers", "trip")]
    if not ran(v, "book_hotel"):
        return {
            "action": tool(
                "book_hotel",
                cites,
                hotel_id=hotel["id"],
                check_in=trip["check_in"],
                check_out=trip["check_out"],
                guests=travellers_of(v),
            )
        }
    booking = v.last_output("book_hotel")
    kept = ("ref", "hotel", "hotel_id", "check_in", "check_out", "guests", "price_per_night")
    return {
        "delta": [
            add(
                "hotel_booking",
                "artifact",
                f"Booked {booking['hotel']} ({hotel['district']}) {booking['check_in']}.."
                f"{booking['check_out']}, {booking['price_per_night']} EUR/night, "
                f"ref {booking['ref']}",
                {k: booking[k] for k in kept},
                [("DEPENDS_ON", v.current("hotel_choice"))],
                [v.last_observation("book_hotel")],
            )
        ],
        **final(
            f"Booked {booking['hotel']} for {', '.join(booking['guests'])}, "
            f"reference {booking['ref']}.",
        ),
    }


def r5(v: PromptView) -> dict:
    booking = read(v, "hotel_booking", _BOOKING)
    over = booking["price_per_night"] > 120
    keep = (
        f"Keep booking {booking['ref']} ({booking['price_per_night']} EUR/night, already "
        "booked); the 120 EUR cap applies to new hotel costs"
    )
    return {
        "delta": [
            add(
                "budget",
                "constraint",
                "Hotel budget now 120 EUR/night",
                120,
                [("SUPERSEDES", v.current("budget"))],
            ),
            add(
                "keep_booking",
                "decision",
                keep,
                booking["ref"],
                [("DEPENDS_ON", v.current("hotel_booking")), ("DEPENDS_ON", "budget")],
            ),
        ],
        **final(
            f"The booking {booking['ref']} is already made, so we keep it"
            f"{' although it is above 120 EUR' if over else ''}; new spending follows the "
            "120 EUR cap.",
            "Budget lowered to 120; booking kept",
        ),
    }


def r6(v: PromptView) -> dict:
    trip = trip_of(v)
    if not ran(v, "search_flights"):
        return keeping(
            v,
            {
                "action": tool(
                    "search_flights",
                    origin="Berlin",
                    destination=trip["city"],
                    date=trip["check_in"],
                )
            },
            "trip",
            "travellers",
        )
    morning = [f for f in v.last_output("search_flights") if f["arrives"] < "12:00"]
    pick = min(morning, key=lambda f: f["price"])
    people = travellers_of(v)
    kept = ("id", "airline", "flight_no", "date", "departs", "arrives", "price")
    return {
        "delta": [
            add(
                "outbound_flight",
                "decision",
                f"Flight {pick['id']} Berlin {pick['departs']} -> {trip['city']} "
                f"{pick['arrives']}, {pick['price']} EUR pp",
                {k: pick[k] for k in kept} | {"passengers": people},
                [("DEPENDS_ON", v.current("trip"))],
                [v.last_observation("search_flights")],
            )
        ],
        **final(
            f"Take {pick['id']}: departs {pick['departs']}, arrives {pick['arrives']}, "
            f"{pick['price']} EUR each for {len(people)}.",
        ),
    }


def r7(v: PromptView) -> dict:
    booking = read(v, "hotel_booking", _BOOKING)
    vegetarian = "vegetarian" in v.summary("diet")
    step_free = v.current("step_free") is not None
    if not ran(v, "search_restaurants"):
        return keeping(
            v,
            {
                "action": tool(
                    "search_restaurants",
                    district=booking["district"],
                    vegetarian=vegetarian,
                    step_free=step_free,
                )
            },
            "hotel_booking",
            "diet",
            "step_free",
        )
    pick = v.last_output("search_restaurants")[0]
    kept = ("id", "name", "district", "price_per_person", "address")
    return {
        "delta": [
            add(
                "dinner",
                "artifact",
                f"Dinner {booking['check_in']} at {pick['name']} "
                f"({pick['price_per_person']} EUR pp)",
                {k: pick[k] for k in kept} | {"date": booking["check_in"]},
                [("DEPENDS_ON", v.current("diet")), ("DEPENDS_ON", v.current("step_free"))],
                [v.last_observation("search_restaurants")],
            )
        ],
        **final(
            f"Dinner on {booking['check_in']} at {pick['name']} in {pick['district']}: "
            "vegetarian and step-free.",
        ),
    }


def r8(v: PromptView) -> dict:
    booking = read(v, "hotel_booking", _BOOKING)
    flight, dinner = read(v, "outbound_flight", _FLIGHT), read(v, "dinner", _DINNER)
    n = len(travellers_of(v))
    plan = plan_text(booking, nights(booking["check_in"], booking["check_out"]), flight, dinner, n)
    total = int(plan.rsplit("total ", 1)[1].split()[0])
    return {
        "delta": [
            add(
                "plan_summary",
                "artifact",
                f"Trip total {total} EUR",
                plan,
                [
                    ("DERIVED_FROM", v.current(k))
                    for k in ("hotel_booking", "outbound_flight", "dinner")
                ],
            )
        ],
        **final(plan + "."),
    }


PLANNERS: list[Callable[[PromptView], dict]] = [r1, r2, r3, r4, r5, r6, r7, r8]
EXPECTED_TOTAL_EUR = 145 * 3 + 129 * 2 + 28 * 2  # what r8 must find if memory worked


class ScriptedPlanner:
    """The demo's deterministic model: the request's planner applied to the parsed prompt.

    `used` lists, per request, the past states whose content a planner read: what a prefetch
    should have opened (its precision and recall are measured against it)."""

    def __init__(self) -> None:
        self.used: dict[str, set[str]] = {}

    def __call__(self, messages: list[dict[str, Any]]) -> dict:
        view = parse(messages)
        text = view.request.strip()
        for request, planner in zip(REQUESTS, PLANNERS, strict=True):
            if request == text:
                try:
                    return planner(view)
                finally:
                    self.used.setdefault(view.request_id, set()).update(view.read)
        return final("This scripted demo model only knows the demo's requests.", "Unknown request")


def scripted_policy(messages: list[dict[str, Any]]) -> dict:
    """One planner's step, with nothing kept between calls."""
    return ScriptedPlanner()(messages)
