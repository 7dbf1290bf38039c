"""The plain agent's scripted model: the demo's requests answered from the chat history alone.

It takes the same actions with the same tools as FlowState's scripted planner and gives the
same answers, reading every fact from the conversation it is sent (the user's messages and
earlier tool results), so a history that lost something shows up as a failed call.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from flowstate.demo.scenario import REQUESTS, plan_text
from flowstate.llm import ToolCalls

Message = dict[str, Any]


class Chat:
    """The messages a plain agent's call was sent, read back."""

    def __init__(self, messages: list[Message]) -> None:
        self.messages = messages
        users = [i for i, m in enumerate(messages) if m["role"] == "user"]
        self.request = messages[users[-1]]["content"]
        self.current = messages[users[-1] + 1 :]  # this request's calls and results so far
        self.said = " ".join(m["content"] for m in messages if m["role"] == "user")

    def require(self, *phrases: str) -> None:
        """Fail unless the user said each of `phrases` somewhere in the history."""
        missing = [p for p in phrases if p not in self.said]
        if missing:
            raise LookupError(f"the history lacks what the user said: {missing}")

    def outputs(self, tool: str, current: bool = False) -> list[Any]:
        """Parsed results of `tool`'s calls, oldest first (this request's only, or all)."""
        messages = self.current if current else self.messages
        names = {
            c["id"]: c["function"]["name"]
            for m in messages
            if m["role"] == "assistant"
            for c in m.get("tool_calls") or []
        }
        return [
            json.loads(m["content"])
            for m in messages
            if m["role"] == "tool" and names.get(m["tool_call_id"]) == tool
        ]

    def last(self, tool: str, current: bool = False) -> Any:
        found = self.outputs(tool, current)
        if not found:
            raise LookupError(f"no {tool} result in the history")
        return found[-1]


def call(name: str, **arguments: Any) -> ToolCalls:
    return ToolCalls(((name, arguments),))


def p1(chat: Chat) -> str:
    return "Noted: Lisbon, 12-15 June 2027, boutique hotels, vegetarian food."


def p2(chat: Chat) -> str | ToolCalls:
    chat.require("Lisbon", "boutique", "150 EUR per night")
    if not chat.outputs("search_hotels", current=True):
        return call("search_hotels", city="Lisbon", max_price_per_night=150, style="boutique")
    hotels = chat.last("search_hotels")
    names = ", ".join(f"{h['name']} ({h['price_per_night']} EUR)" for h in hotels)
    return f"Options within 150 EUR/night: {names}."


def _pick(chat: Chat) -> dict:
    """The cheapest step-free hotel of the last search (Ben needs step-free access)."""
    chat.require("wheelchair")
    return min(
        (h for h in chat.last("search_hotels") if h["step_free"]),
        key=lambda h: h["price_per_night"],
    )


def p3(chat: Chat) -> str:
    pick = _pick(chat)
    return (
        f"{pick['name']} in {pick['district']} is step-free and {pick['price_per_night']} "
        "EUR/night; I recommend it."
    )


def p4(chat: Chat) -> str | ToolCalls:
    chat.require("12 to 15 June 2027", "I'm Ana", "Ben is joining")
    pick = _pick(chat)
    if not chat.outputs("hotel_details", current=True):
        return call("hotel_details", hotel_id=pick["id"])
    if not chat.outputs("book_hotel", current=True):
        return call(
            "book_hotel",
            hotel_id=pick["id"],
            check_in="2027-06-12",
            check_out="2027-06-15",
            guests=["Ana", "Ben"],
        )
    booking = chat.last("book_hotel")
    return (
        f"Booked {booking['hotel']} for {', '.join(booking['guests'])}, reference {booking['ref']}."
    )


def p5(chat: Chat) -> str:
    booking = chat.last("book_hotel")
    over = booking["price_per_night"] > 120
    return (
        f"The booking {booking['ref']} is already made, so we keep it"
        f"{' although it is above 120 EUR' if over else ''}; new spending follows the "
        "120 EUR cap."
    )


def _flight(chat: Chat) -> dict:
    morning = [f for f in chat.last("search_flights") if f["arrives"] < "12:00"]
    return min(morning, key=lambda f: f["price"])


def p6(chat: Chat) -> str | ToolCalls:
    chat.require("Lisbon from 12 to 15 June 2027")
    if not chat.outputs("search_flights", current=True):
        return call("search_flights", origin="Berlin", destination="Lisbon", date="2027-06-12")
    pick = _flight(chat)
    people = chat.last("book_hotel")["guests"]
    return (
        f"Take {pick['id']}: departs {pick['departs']}, arrives {pick['arrives']}, "
        f"{pick['price']} EUR each for {len(people)}."
    )


def p7(chat: Chat) -> str | ToolCalls:
    chat.require("vegetarian", "step-free")
    district = chat.last("hotel_details")["district"]
    if not chat.outputs("search_restaurants", current=True):
        return call("search_restaurants", district=district, vegetarian=True, step_free=True)
    pick = chat.last("search_restaurants")[0]
    check_in = chat.last("book_hotel")["check_in"]
    return (
        f"Dinner on {check_in} at {pick['name']} in {pick['district']}: vegetarian and step-free."
    )


def p8(chat: Chat) -> str:
    booking = chat.last("book_hotel")
    dinner = chat.last("search_restaurants")[0]
    return plan_text(booking, 3, _flight(chat), dinner, len(booking["guests"])) + "."


PLANNERS: list[Callable[[Chat], str | ToolCalls]] = [p1, p2, p3, p4, p5, p6, p7, p8]


def plain_policy(messages: list[Message]) -> str | ToolCalls:
    """The plain agent's deterministic model: the request's planner over the chat history."""
    chat = Chat(messages)
    for request, planner in zip(REQUESTS, PLANNERS, strict=True):
        if request == chat.request.strip():
            return planner(chat)
    return "This scripted demo model only knows the demo's requests."
