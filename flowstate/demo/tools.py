"""The demo's travel tools, over a small dataset shipped with the package.

They answer as real travel APIs do: a search lists several candidates with their attributes
(a few hundred tokens), a details page adds the description, rooms and policies, a booking
returns a confirmation. Bookings live in the `TripDesk` instance (a pretend supplier), not in
FlowState: the agent has to remember what it booked in its own memory, as it would with a
real booking API.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from typing import Any

from flowstate.engine.tools import Tool

# What a hotel search lists per candidate; the details page has every field.
HOTEL_SEARCH_FIELDS = (
    "id", "name", "district", "style", "price_per_night", "rating", "reviews",
    "distance_to_centre_km", "breakfast_included", "step_free", "free_cancellation", "highlights",
)  # fmt: skip


def load_data() -> dict[str, list[dict[str, Any]]]:
    return json.loads(resources.files("flowstate.demo").joinpath("trip_data.json").read_text())


class TripDesk:
    """Search and booking over the demo dataset."""

    def __init__(self) -> None:
        self.data = load_data()
        self.bookings: dict[str, dict[str, Any]] = {}

    def search_hotels(
        self, city: str, max_price_per_night: int, style: str | None = None
    ) -> list[dict]:
        """Hotels in a city at or under a nightly price, optionally of one style
        (boutique, business, hostel), cheapest first."""
        found = [
            {k: h[k] for k in HOTEL_SEARCH_FIELDS}
            for h in self.data["hotels"]
            if h["city"].lower() == city.lower()
            and h["price_per_night"] <= max_price_per_night
            and (style is None or h["style"] == style)
        ]
        return sorted(found, key=lambda h: h["price_per_night"])

    def hotel_details(self, hotel_id: str) -> dict:
        """Everything known about one hotel: rooms, accessibility, policies, address."""
        for hotel in self.data["hotels"]:
            if hotel["id"] == hotel_id:
                return hotel
        raise ValueError(f"no hotel {hotel_id!r}")

    def book_hotel(self, hotel_id: str, check_in: str, check_out: str, guests: list[str]) -> dict:
        """Book a hotel room for named guests (spends money)."""
        hotel = self.hotel_details(hotel_id)
        ref = f"BK-{len(self.bookings) + 1:03d}"
        self.bookings[ref] = {
            "ref": ref,
            "status": "confirmed",
            "hotel": hotel["name"],
            "hotel_id": hotel_id,
            "room": hotel["room"],
            "check_in": check_in,
            "check_out": check_out,
            "guests": guests,
            "price_per_night": hotel["price_per_night"],
            "currency": "EUR",
        }
        return self.bookings[ref]

    def search_flights(self, origin: str, destination: str, date: str) -> list[dict]:
        """Flights on a date (YYYY-MM-DD), cheapest first."""
        found = [
            f
            for f in self.data["flights"]
            if (f["from"], f["to"], f["date"]) == (origin, destination, date)
        ]
        return sorted(found, key=lambda f: f["price"])

    def search_restaurants(
        self, district: str, vegetarian: bool = False, step_free: bool = False
    ) -> list[dict]:
        """Restaurants in a district, optionally only vegetarian and/or step-free ones,
        cheapest first."""
        found = [
            r
            for r in self.data["restaurants"]
            if r["district"] == district
            and (r["vegetarian"] or not vegetarian)
            and (r["step_free"] or not step_free)
        ]
        return sorted(found, key=lambda r: r["price_per_person"])

    def tools(self) -> list[Tool]:
        plain: list[Callable[..., Any]] = [
            self.search_hotels,
            self.hotel_details,
            self.search_flights,
            self.search_restaurants,
        ]
        return [
            *(Tool.from_function(f) for f in plain),
            Tool.from_function(self.book_hotel, consequential=True),
        ]
