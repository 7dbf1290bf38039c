"""The airline domain, written from its policy.md: look-ups, bookings, changes, cancellations.

The policy says which rules the API itself enforces (payment limits, balances, seats, bag
and passenger counts) and which it leaves to the agent ("The API does not check these"):
cancellation eligibility, basic-economy changes and flown segments are the agent's to check,
so they are not checked here either.
"""

from __future__ import annotations

from datetime import date as Date
from datetime import timedelta
from typing import Any, Literal

from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from flowstate_bench.tau.env import Environment, ToolError, stable_code, stable_id

NOW = "2024-05-15T15:00:00"  # "The current time is 2024-05-15 15:00:00 EST."
MAX_PASSENGERS = 5
INSURANCE_PER_PASSENGER = 30
EXTRA_BAG = 50
PAYMENT_LIMITS = {"certificate": 1, "credit_card": 1, "gift_card": 3}

Cabin = Literal["basic_economy", "economy", "business"]


class FlightRef(TypedDict):
    flight_number: str
    date: str  # YYYY-MM-DD


class Passenger(TypedDict):
    first_name: str
    last_name: str
    dob: str  # YYYY-MM-DD


class Payment(TypedDict):
    payment_id: str
    amount: int | float


class AirlineEnv(Environment):
    domain = "airline"
    TOOLS = (
        "get_user_details",
        "get_reservation_details",
        "list_all_airports",
        "search_direct_flight",
        "search_onestop_flight",
        "get_flight_status",
        "book_reservation",
        "cancel_reservation",
        "update_reservation_baggages",
        "update_reservation_flights",
        "update_reservation_passengers",
        "send_certificate",
        "calculate",
        "transfer_to_human_agents",
    )
    WRITE_TOOLS = frozenset(
        {
            "book_reservation",
            "cancel_reservation",
            "update_reservation_baggages",
            "update_reservation_flights",
            "update_reservation_passengers",
            "send_certificate",
        }
    )

    # -- look-ups ---------------------------------------------------------------------------

    def get_user_details(self, user_id: str) -> dict[str, Any]:
        """A user's profile: name, addresses, date of birth, payment methods (with gift card
        and certificate balances), membership level and reservation ids."""
        return self._user(user_id)

    def get_reservation_details(self, reservation_id: str) -> dict[str, Any]:
        """A reservation: flights with prices, passengers, payments, cabin, bags, insurance,
        creation time and status."""
        return self._reservation(reservation_id)

    def list_all_airports(self) -> list[str]:
        """The IATA codes of every airport served."""
        ends = {f[k] for f in self.db["flights"].values() for k in ("origin", "destination")}
        return sorted(ends)

    def search_direct_flight(self, origin: str, destination: str, date: str) -> list[dict]:
        """Direct flights between two airports (IATA codes) that can be booked on a date
        (YYYY-MM-DD), with seats left and prices per cabin."""
        return [
            self._offer(f, date)
            for f in self.db["flights"].values()
            if f["origin"] == origin and f["destination"] == destination and _bookable(f, date)
        ]

    def search_onestop_flight(self, origin: str, destination: str, date: str) -> list[list]:
        """Connections with one stop, departing on a date (YYYY-MM-DD): pairs of flights where
        the second leaves the stop after the first lands (the next day when it lands +1)."""
        found = []
        for first in self.db["flights"].values():
            if first["origin"] != origin or not _bookable(first, date):
                continue
            arrival = first["scheduled_arrival_time_est"]
            next_day = arrival.endswith("+1")
            leg_date = _shift(date, 1) if next_day else date
            for second in self.db["flights"].values():
                if (
                    second["origin"] == first["destination"]
                    and second["destination"] == destination
                    and second["scheduled_departure_time_est"] > arrival.removesuffix("+1")
                    and _bookable(second, leg_date)
                ):
                    found.append([self._offer(first, date), self._offer(second, leg_date)])
        return found

    def get_flight_status(self, flight_number: str, date: str) -> str:
        """A flight's status on a date: available, on time, delayed, flying, landed or
        cancelled."""
        return self._flight_day(flight_number, date)["status"]

    # -- writes -----------------------------------------------------------------------------

    def book_reservation(
        self,
        user_id: str,
        origin: str,
        destination: str,
        flight_type: Literal["one_way", "round_trip"],
        cabin: Cabin,
        flights: list[FlightRef],
        passengers: list[Passenger],
        payment_methods: list[Payment],
        total_baggages: int,
        nonfree_baggages: int,
        insurance: Literal["yes", "no"],
    ) -> dict[str, Any]:
        """Book a reservation: every passenger on the same flights in one cabin. The payments
        (methods from the user's profile; at most 1 certificate, 1 credit card, 3 gift cards)
        must add up to the total: fares x passengers, 30 per passenger for insurance, 50 per
        non-free bag."""
        user = self._user(user_id, edit=True)
        if not 1 <= len(passengers) <= MAX_PASSENGERS:
            raise ToolError(f"a reservation has 1 to {MAX_PASSENGERS} passengers")
        if not flights:
            raise ToolError("a reservation needs at least one flight")
        _check_bags(total_baggages, nonfree_baggages)
        segments = [self._segment(f, cabin, len(passengers)) for f in flights]
        total = sum(s["price"] for s in segments) * len(passengers) + EXTRA_BAG * nonfree_baggages
        if insurance == "yes":
            total += INSURANCE_PER_PASSENGER * len(passengers)
        self._charge_booking(user, payment_methods, total)
        for s in segments:
            self._take_seats(s, cabin, len(passengers))
        rid = self._new_reservation_id(user_id)
        reservation = {
            "reservation_id": rid,
            "user_id": user_id,
            "origin": origin,
            "destination": destination,
            "flight_type": flight_type,
            "cabin": cabin,
            "flights": segments,
            "passengers": [dict(p) for p in passengers],
            "payment_history": [dict(p) for p in payment_methods],
            "created_at": NOW,
            "total_baggages": total_baggages,
            "nonfree_baggages": nonfree_baggages,
            "insurance": insurance,
        }
        self.db["reservations"][rid] = reservation
        user["reservations"].append(rid)
        return reservation

    def cancel_reservation(self, reservation_id: str) -> dict[str, Any]:
        """Cancel a whole reservation; every payment is refunded to its method in 5 to 7
        business days. Check the policy's cancellation rules BEFORE calling: this does not."""
        res = self._reservation(reservation_id, edit=True)
        if res.get("status") == "cancelled":
            raise ToolError(f"reservation {reservation_id} is already cancelled")
        refunds = [
            {"payment_id": p["payment_id"], "amount": -p["amount"]}
            for p in res["payment_history"]
            if p["amount"] > 0
        ]
        res["payment_history"].extend(refunds)
        res["status"] = "cancelled"
        return res

    def update_reservation_baggages(
        self, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str
    ) -> dict[str, Any]:
        """Set a reservation's checked bags (bags can be added, never removed). Each added
        non-free bag costs 50, paid with a method from the user's profile."""
        res = self._active(reservation_id, edit=True)
        _check_bags(total_baggages, nonfree_baggages)
        if total_baggages < res["total_baggages"] or nonfree_baggages < res["nonfree_baggages"]:
            raise ToolError("checked bags can be added but not removed")
        cost = EXTRA_BAG * (nonfree_baggages - res["nonfree_baggages"])
        if cost:
            self._pay(self._user(res["user_id"], edit=True), payment_id, cost, single=True)
            res["payment_history"].append({"payment_id": payment_id, "amount": cost})
        res["total_baggages"], res["nonfree_baggages"] = total_baggages, nonfree_baggages
        return res

    def update_reservation_flights(
        self, reservation_id: str, cabin: Cabin, flights: list[FlightRef], payment_id: str
    ) -> dict[str, Any]:
        """Replace a reservation's flights and/or cabin (give ALL flights, kept ones too). A kept
        flight in the same cabin keeps its price; others are priced now. The difference for all
        passengers is paid or refunded with one gift card or credit card from the profile."""
        res = self._active(reservation_id, edit=True)
        n = len(res["passengers"])
        kept = {(s["flight_number"], s["date"]): s for s in res["flights"]}
        segments = []
        for f in flights:
            old = kept.get((f["flight_number"], f["date"]))
            if old is not None and cabin == res["cabin"]:
                segments.append(dict(old))
            else:
                segments.append(self._segment(f, cabin, n))
        difference = (
            sum(s["price"] for s in segments) - sum(s["price"] for s in res["flights"])
        ) * n
        user = self._user(res["user_id"], edit=True)
        method = self._method(user, payment_id)
        if method["source"] not in ("gift_card", "credit_card"):
            raise ToolError("a flight change is paid or refunded with a gift card or credit card")
        self._pay(user, payment_id, difference, single=True)
        for s, f in zip(segments, flights, strict=True):
            if (f["flight_number"], f["date"]) not in kept or cabin != res["cabin"]:
                self._take_seats(s, cabin, n)
        if difference:
            res["payment_history"].append({"payment_id": payment_id, "amount": difference})
        res["flights"], res["cabin"] = segments, cabin
        return res

    def update_reservation_passengers(
        self, reservation_id: str, passengers: list[Passenger]
    ) -> dict[str, Any]:
        """Replace the passengers' details; the number of passengers cannot change."""
        res = self._active(reservation_id, edit=True)
        if len(passengers) != len(res["passengers"]):
            raise ToolError(
                f"the reservation has {len(res['passengers'])} passengers; the number of "
                "passengers cannot be changed"
            )
        res["passengers"] = [dict(p) for p in passengers]
        return res

    def send_certificate(self, user_id: str, amount: int | float) -> str:
        """Give a user a travel certificate of an amount, as compensation."""
        user = self._user(user_id, edit=True)
        if amount <= 0:
            raise ToolError("a certificate amount must be positive")
        cid = stable_id("certificate_", user_id, len(user["payment_methods"]), amount)
        user["payment_methods"][cid] = {"source": "certificate", "amount": amount, "id": cid}
        return f"Certificate {cid} of {amount} added to user {user_id}"

    # -- helpers ----------------------------------------------------------------------------

    # `edit=True` hands out the environment's own copy of a record, to be changed.

    def _user(self, user_id: str, edit: bool = False) -> dict[str, Any]:
        if user_id not in self.db["users"]:
            raise ToolError(f"user {user_id} not found")
        return self.edit("users", user_id) if edit else self.db["users"][user_id]

    def _reservation(self, reservation_id: str, edit: bool = False) -> dict[str, Any]:
        if reservation_id not in self.db["reservations"]:
            raise ToolError(f"reservation {reservation_id} not found")
        table = self.db["reservations"]
        return self.edit("reservations", reservation_id) if edit else table[reservation_id]

    def _active(self, reservation_id: str, edit: bool = False) -> dict[str, Any]:
        res = self._reservation(reservation_id, edit)
        if res.get("status") == "cancelled":
            raise ToolError(f"reservation {reservation_id} is cancelled")
        return res

    def _flight_day(self, flight_number: str, date: str) -> dict[str, Any]:
        flight = self.db["flights"].get(flight_number)
        if flight is None:
            raise ToolError(f"flight {flight_number} not found")
        day = flight["dates"].get(date)
        if day is None:
            raise ToolError(f"flight {flight_number} does not fly on {date}")
        return day

    def _offer(self, flight: dict[str, Any], date: str) -> dict[str, Any]:
        day = flight["dates"][date]
        info = {k: v for k, v in flight.items() if k != "dates"}
        return {**info, "date": date, **day}

    def _segment(self, ref: FlightRef, cabin: str, seats: int) -> dict[str, Any]:
        number, date = ref["flight_number"], ref["date"]
        day = self._flight_day(number, date)
        if day["status"] != "available":
            raise ToolError(f"flight {number} on {date} cannot be booked: {day['status']}")
        if day["available_seats"][cabin] < seats:
            raise ToolError(f"flight {number} on {date} has not {seats} {cabin} seats left")
        flight = self.db["flights"][number]
        return {
            "origin": flight["origin"],
            "destination": flight["destination"],
            "flight_number": number,
            "date": date,
            "price": day["prices"][cabin],
        }

    def _take_seats(self, segment: dict[str, Any], cabin: str, seats: int) -> None:
        flight = self.edit("flights", segment["flight_number"])
        flight["dates"][segment["date"]]["available_seats"][cabin] -= seats

    def _method(self, user: dict[str, Any], payment_id: str) -> dict[str, Any]:
        method = user["payment_methods"].get(payment_id)
        if method is None:
            raise ToolError(f"payment method {payment_id} is not in the user's profile")
        return method

    def _charge_booking(self, user: dict[str, Any], payments: list[Payment], total: float) -> None:
        methods = [self._method(user, p["payment_id"]) for p in payments]
        for source, limit in PAYMENT_LIMITS.items():
            if sum(m["source"] == source for m in methods) > limit:
                raise ToolError(f"at most {limit} {source.replace('_', ' ')} per reservation")
        paid = sum(p["amount"] for p in payments)
        if abs(paid - total) > 1e-6:
            raise ToolError(f"the payments add up to {paid}, but the total price is {total}")
        for p, m in zip(payments, methods, strict=True):
            if m["source"] in ("gift_card", "certificate") and p["amount"] > m["amount"]:
                raise ToolError(f"{p['payment_id']} has only {m['amount']} left")
        for p in payments:
            self._pay(user, p["payment_id"], p["amount"], single=False)

    def _pay(self, user: dict[str, Any], payment_id: str, amount: float, single: bool) -> None:
        """Take `amount` (or refund it, when negative) from a balance-carrying method."""
        method = self._method(user, payment_id)
        if method["source"] == "certificate":
            if single:
                raise ToolError("a travel certificate can only pay for a new booking")
            # "The remaining amount of a travel certificate is not refundable": it is used up.
            del user["payment_methods"][payment_id]
        elif method["source"] == "gift_card":
            if amount > method["amount"] + 1e-6:
                raise ToolError(f"{payment_id} has only {method['amount']} left")
            method["amount"] = round(method["amount"] - amount, 2)

    def _new_reservation_id(self, user_id: str) -> str:
        n = len(self.db["reservations"])
        while (rid := stable_code(user_id, n)) in self.db["reservations"]:
            n += 1
        return rid


def _bookable(flight: dict[str, Any], date: str) -> bool:
    day = flight["dates"].get(date)
    return day is not None and day["status"] == "available"


def _shift(day: str, days: int) -> str:
    return (Date.fromisoformat(day) + timedelta(days=days)).isoformat()


def _check_bags(total: int, nonfree: int) -> None:
    if total < 0 or nonfree < 0 or nonfree > total:
        raise ToolError("bags: 0 <= nonfree_baggages <= total_baggages")
