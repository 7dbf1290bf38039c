"""The demo: a group trip planned over eight requests to one agent.

Later requests depend on what earlier ones established: dates and tastes from the first,
a budget that changes, a traveller who joins with an accessibility need, a booking that must be
respected. The scripted planner reads only the prompt (through `view.parse`): it finds ids in
the index, asks for them, and decides from the revealed content, so a wrong or missing memory
shows up as a wrong answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
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
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


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


def final(answer: str, summary: str) -> dict:
    return {"action": {"type": "final", "answer": answer, "summary": summary}}


def tool(name: str, cites=(), **arguments: Any) -> dict:  # noqa: ANN001
    return {"type": "tool", "name": name, "arguments": arguments, "cites": list(cites)}


def needs(v: PromptView, *keys: str) -> dict | None:
    """Access the current states of these keys unless they are all revealed already."""
    missing = [v.current(k) for k in keys if v.current(k) not in v.revealed]
    if None in missing:
        if not v.collapsed:
            raise LookupError(f"the index lacks one of {keys}")
        # Older requests are collapsed in the index: list their states, newest first.
        newest = sorted(v.collapsed, key=lambda r: int(r[1:]), reverse=True)
        return {"access": newest[:8]}
    return {"access": missing} if missing else None


def r1(v: PromptView) -> dict:
    return {
        "delta": [
            add(
                "trip",
                "constraint",
                "Lisbon, 12-15 June 2027 (3 nights)",
                {
                    "city": "Lisbon",
                    "check_in": "2027-06-12",
                    "check_out": "2027-06-15",
                    "nights": 3,
                },
            ),
            add("travellers", "constraint", "Travellers: Ana", {"travellers": ["Ana"]}),
            add(
                "hotel_style", "preference", "Prefers small boutique hotels", {"style": "boutique"}
            ),
            add("diet", "preference", "Ana is vegetarian", {"vegetarian": ["Ana"]}),
        ],
        **final(
            "Noted: Lisbon, 12-15 June 2027, boutique hotels, vegetarian food.",
            "Trip basics: Lisbon 12-15 June, boutique, vegetarian",
        ),
    }


def r2(v: PromptView) -> dict:
    if step := needs(v, "trip", "hotel_style"):
        return step
    trip, style = v.content("trip"), v.content("hotel_style")
    if "search_hotels" not in {t for t, _ in v.observations.values()}:
        return {
            "delta": [
                add("budget", "constraint", "Hotel budget 150 EUR/night", {"max_per_night": 150})
            ],
            "action": tool(
                "search_hotels", city=trip["city"], max_price_per_night=150, style=style["style"]
            ),
        }
    hotels = v.last_output("search_hotels")
    names = ", ".join(f"{h['name']} ({h['price_per_night']} EUR)" for h in hotels)
    return {
        "delta": [
            add(
                "hotel_options",
                "environment",
                f"{len(hotels)} boutique hotels fit: {names}",
                hotels,
                [("DEPENDS_ON", "budget"), ("DEPENDS_ON", v.current("hotel_style"))],
                [v.last_observation("search_hotels")],
            )
        ],
        **final(f"Options within 150 EUR/night: {names}.", "Hotel budget and options"),
    }


def r3(v: PromptView) -> dict:
    if step := needs(v, "hotel_options", "travellers"):
        return step
    options, people = v.content("hotel_options"), v.content("travellers")["travellers"]
    fit = [h for h in options if h["step_free"]]
    pick = min(fit, key=lambda h: h["price_per_night"])
    return {
        "delta": [
            add(
                "travellers",
                "constraint",
                f"Travellers: {', '.join([*people, 'Ben'])}",
                {"travellers": [*people, "Ben"]},
                [("SUPERSEDES", v.current("travellers"))],
            ),
            add(
                "step_free",
                "constraint",
                "Everything must be step-free (Ben uses a wheelchair)",
                {"step_free": True},
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
    if step := needs(v, "hotel_choice", "travellers", "trip"):
        return step
    hotel, trip = v.content("hotel_choice"), v.content("trip")
    cites = [v.current(k) for k in ("hotel_choice", "travellers", "trip")]
    if "book_hotel" not in {t for t, _ in v.observations.values()}:
        return {
            "action": tool(
                "book_hotel",
                cites,
                hotel_id=hotel["id"],
                check_in=trip["check_in"],
                check_out=trip["check_out"],
                guests=v.content("travellers")["travellers"],
            )
        }
    booking = v.last_output("book_hotel")
    booking |= {"price_per_night": hotel["price_per_night"], "district": hotel["district"]}
    return {
        "delta": [
            add(
                "hotel_booking",
                "artifact",
                f"Booked {booking['hotel']} {booking['check_in']}..{booking['check_out']}, "
                f"ref {booking['ref']}",
                booking,
                [("DEPENDS_ON", v.current("hotel_choice"))],
                [v.last_observation("book_hotel")],
            )
        ],
        **final(
            f"Booked {booking['hotel']} for {', '.join(booking['guests'])}, "
            f"reference {booking['ref']}.",
            "Hotel booked",
        ),
    }


def r5(v: PromptView) -> dict:
    if step := needs(v, "budget", "hotel_booking"):
        return step
    booking = v.content("hotel_booking")
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
                {"max_per_night": 120},
                [("SUPERSEDES", v.current("budget"))],
            ),
            add(
                "keep_booking",
                "decision",
                keep,
                {"keep": booking["ref"], "over_new_budget": over},
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
    if step := needs(v, "trip", "travellers"):
        return step
    trip = v.content("trip")
    if "search_flights" not in {t for t, _ in v.observations.values()}:
        return {
            "action": tool(
                "search_flights", origin="Berlin", destination=trip["city"], date=trip["check_in"]
            )
        }
    morning = [f for f in v.last_output("search_flights") if f["arrives"] < "12:00"]
    pick = min(morning, key=lambda f: f["price"])
    people = v.content("travellers")["travellers"]
    return {
        "delta": [
            add(
                "outbound_flight",
                "decision",
                f"Flight {pick['id']} Berlin {pick['departs']} -> Lisbon {pick['arrives']}, "
                f"{pick['price']} EUR pp",
                pick | {"passengers": people},
                [("DEPENDS_ON", v.current("trip"))],
                [v.last_observation("search_flights")],
            )
        ],
        **final(
            f"Take {pick['id']}: departs {pick['departs']}, arrives {pick['arrives']}, "
            f"{pick['price']} EUR each for {len(people)}.",
            "Outbound flight chosen",
        ),
    }


def r7(v: PromptView) -> dict:
    if step := needs(v, "hotel_booking", "diet", "step_free"):
        return step
    booking = v.content("hotel_booking")
    if "search_restaurants" not in {t for t, _ in v.observations.values()}:
        return {
            "action": tool(
                "search_restaurants",
                district=booking["district"],
                vegetarian=bool(v.content("diet")["vegetarian"]),
                step_free=v.content("step_free")["step_free"],
            )
        }
    pick = v.last_output("search_restaurants")[0]
    return {
        "delta": [
            add(
                "dinner",
                "artifact",
                f"Dinner {booking['check_in']} at {pick['name']} "
                f"({pick['price_per_person']} EUR pp)",
                pick | {"date": booking["check_in"]},
                [("DEPENDS_ON", v.current("diet")), ("DEPENDS_ON", v.current("step_free"))],
                [v.last_observation("search_restaurants")],
            )
        ],
        **final(
            f"Dinner on {booking['check_in']} at {pick['name']} in {pick['district']}: "
            "vegetarian and step-free.",
            "First-night dinner chosen",
        ),
    }


def r8(v: PromptView) -> dict:
    if step := needs(v, "hotel_booking", "outbound_flight", "dinner", "travellers", "trip"):
        return step
    booking, flight, dinner = (v.content(k) for k in ("hotel_booking", "outbound_flight", "dinner"))
    n = len(v.content("travellers")["travellers"])
    hotel = booking["price_per_night"] * v.content("trip")["nights"]
    total = hotel + flight["price"] * n + dinner["price_per_person"] * n
    plan = (
        f"{n} travellers; hotel {booking['hotel']} ({booking['ref']}) {hotel} EUR; flight "
        f"{flight['id']} {flight['price'] * n} EUR; dinner at {dinner['name']} "
        f"{dinner['price_per_person'] * n} EUR; total {total} EUR"
    )
    return {
        "delta": [
            add(
                "plan_summary",
                "artifact",
                f"Trip total {total} EUR",
                {"plan": plan, "total": total},
                [
                    ("DERIVED_FROM", v.current(k))
                    for k in ("hotel_booking", "outbound_flight", "dinner")
                ],
            )
        ],
        **final(plan + ".", "Plan summary with total"),
    }


PLANNERS: list[Callable[[PromptView], dict]] = [r1, r2, r3, r4, r5, r6, r7, r8]
EXPECTED_TOTAL_EUR = 145 * 3 + 129 * 2 + 28 * 2  # what r8 must find if memory worked


def scripted_policy(messages: list[dict[str, Any]]) -> dict:
    """The demo's deterministic model: the request's planner applied to the parsed prompt."""
    view = parse(messages)
    text = view.request.strip()
    for request, planner in zip(REQUESTS, PLANNERS, strict=True):
        if request == text:
            return planner(view)
    return final("This scripted demo model only knows the demo's requests.", "Unknown request")
