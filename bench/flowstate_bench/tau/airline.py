"""The airline domain, behaving as the original τ³ environment does, call for call.

The API checks only what the original's checks: ids exist, flights are available with
enough seats, payment methods exist with enough balance, payments add up. Everything the
policy leaves to the agent ("The API does not check these") executes: a second certificate,
six passengers, fewer bags, a cancelled reservation changed or cancelled again. Those are the
agent's failures, which the benchmark's database comparison catches.

Seats are taken by a booking only; a flight change or a cancellation does not give or take
any (as in the original). Gift card balances are not rounded. New ids are the original's
fixed sequences: reservations HATHAT, HATHAU, HATHAV; certificates certificate_3221322..4.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel

from flowstate_bench.tau.env import Environment, ToolError
from flowstate_bench.tau.records import (
    AIRPORTS,
    CabinClass,
    Certificate,
    FlightInfo,
    FlightRef,
    FlightType,
    Insurance,
    Passenger,
    PassengerRef,
    Payment,
    PaymentRef,
    Reservation,
    ReservationFlight,
    dump,
)

NOW = "2024-05-15T15:00:00"  # "The current time is 2024-05-15 15:00:00 EST."
INSURANCE_PER_PASSENGER = 30
EXTRA_BAG = 50
RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
CERTIFICATE_IDS = tuple(f"certificate_{n}" for n in (3221322, 3221323, 3221324))


class AirlineEnv(Environment):
    domain = "airline"
    TOOLKIT = "AirlineTools"
    TOOLS = (
        "book_reservation",
        "calculate",
        "cancel_reservation",
        "get_reservation_details",
        "get_user_details",
        "list_all_airports",
        "search_direct_flight",
        "search_onestop_flight",
        "send_certificate",
        "transfer_to_human_agents",
        "update_reservation_baggages",
        "update_reservation_flights",
        "update_reservation_passengers",
        "get_flight_status",
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

    def list_all_airports(self) -> list[dict[str, str]]:
        """Every airport served: IATA code and city."""
        return [{"iata": iata, "city": city} for iata, city in AIRPORTS]

    def search_direct_flight(self, origin: str, destination: str, date: str) -> list[dict]:
        """Direct flights between two airports (IATA codes) that can be booked on a date
        (YYYY-MM-DD), with seats left and prices per cabin."""
        return self._direct(date, origin, destination)

    def search_onestop_flight(self, origin: str, destination: str, date: str) -> list[list]:
        """Connections with one stop departing on a date (YYYY-MM-DD): pairs of flights where
        the second leaves the stop no earlier than the first lands (the next day when the
        first lands +1)."""
        found = []
        for first in self._direct(date, origin, None):
            first["date"] = date
            arrival = first["scheduled_arrival_time_est"]
            # As the original: the next day is "2024-05-<day + 1>", unpadded, May only.
            next_date = f"2024-05-{int(date[-2:]) + 1}" if "+1" in arrival else date
            for second in self._direct(next_date, first["destination"], destination, arrival):
                second["date"] = next_date
                found.append([first, second])
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
        flight_type: FlightType,
        cabin: CabinClass,
        flights: list[FlightRef],
        passengers: list[PassengerRef],
        payment_methods: list[PaymentRef],
        total_baggages: int,
        nonfree_baggages: int,
        insurance: Insurance,
    ) -> dict[str, Any]:
        """Book a reservation: every passenger on the same flights in one cabin, paid with
        methods from the user's profile. The payments must add up to the total: fares x
        passengers, 30 per passenger for insurance, 50 per non-free bag."""
        legs: list[FlightInfo] = _models(FlightInfo, flights)
        passengers = _models(Passenger, passengers)
        payments: list[Payment] = _models(Payment, payment_methods)
        user = self._user(user_id)
        reservation_id = next((r for r in RESERVATION_IDS if r not in self.db["reservations"]), "")
        if not reservation_id:
            raise ToolError("Too many reservations")
        reservation = Reservation(
            reservation_id=reservation_id,
            user_id=user_id,
            origin=origin,
            destination=destination,
            flight_type=flight_type,
            cabin=cabin,
            flights=[],
            passengers=copy.deepcopy(passengers),
            payment_history=copy.deepcopy(payments),
            created_at=NOW,
            total_baggages=total_baggages,
            nonfree_baggages=nonfree_baggages,
            insurance=insurance,
        )
        total_price: Any = 0
        taken = []
        for info in legs:
            number = info.flight_number
            flight = self._flight(number)
            day = self._flight_day(number, info.date)
            if day["status"] != "available":
                raise ToolError(f"Flight {number} not available on date {info.date}")
            if day["available_seats"][cabin] < len(passengers):
                raise ToolError(f"Not enough seats on flight {number}")
            price = day["prices"][cabin]
            reservation.flights.append(_segment(flight, info.date, price))
            taken.append((number, info.date))
            total_price += price * len(passengers)
        if insurance == "yes":
            total_price += INSURANCE_PER_PASSENGER * len(passengers)
        total_price += EXTRA_BAG * nonfree_baggages
        for payment in payments:
            pid = payment.payment_id
            if pid not in user["payment_methods"]:
                raise ToolError(f"Payment method {pid} not found")
            method = user["payment_methods"][pid]
            if (
                method["source"] in ("gift_card", "certificate")
                and method["amount"] < payment.amount
            ):
                raise ToolError(f"Not enough balance in payment method {pid}")
        paid = sum(p.amount for p in payments)
        if paid != total_price:
            raise ToolError(
                f"Payment amount does not add up, total price is {total_price}, but paid {paid}"
            )
        user = self.edit("users", user_id)
        for payment in payments:
            method = user["payment_methods"][payment.payment_id]
            if method["source"] == "gift_card":
                method["amount"] -= payment.amount
            elif method["source"] == "certificate":
                user["payment_methods"].pop(payment.payment_id)
        for number, date in taken:
            self.edit("flights", number)["dates"][date]["available_seats"][cabin] -= len(passengers)
        record = dump(reservation)
        self.add("reservations", reservation_id, record)
        user["reservations"].append(reservation_id)
        return record

    def cancel_reservation(self, reservation_id: str) -> dict[str, Any]:
        """Cancel a whole reservation: every payment is refunded to its method. Check the
        policy's cancellation rules BEFORE calling: this does not."""
        res = self._reservation(reservation_id, edit=True)
        refunds = [
            dump(Payment(payment_id=p["payment_id"], amount=-p["amount"]))
            for p in res["payment_history"]
        ]
        res["payment_history"].extend(refunds)
        res["status"] = "cancelled"
        return res

    def update_reservation_baggages(
        self, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str
    ) -> dict[str, Any]:
        """Set a reservation's checked bags. Each added non-free bag costs 50, paid with a
        gift card or credit card from the user's profile."""
        res = self._reservation(reservation_id, edit=True)
        self._user(res["user_id"])
        price = EXTRA_BAG * max(0, nonfree_baggages - res["nonfree_baggages"])
        self._pay_change(res, payment_id, price)
        res["total_baggages"], res["nonfree_baggages"] = total_baggages, nonfree_baggages
        return res

    def update_reservation_flights(
        self, reservation_id: str, cabin: CabinClass, flights: list[FlightRef], payment_id: str
    ) -> dict[str, Any]:
        """Replace a reservation's flights and/or cabin (give ALL flights, kept ones too). A kept
        flight in the same cabin keeps its price; others are priced now. The difference for all
        passengers is paid or refunded with a gift card or credit card from the profile."""
        legs: list[FlightInfo] = _models(FlightInfo, flights)
        res = self._reservation(reservation_id, edit=True)
        self._user(res["user_id"])
        n = len(res["passengers"])
        total_price: Any = 0
        segments = []
        for info in legs:
            kept = next(
                (
                    s
                    for s in res["flights"]
                    if s["flight_number"] == info.flight_number
                    and s["date"] == info.date
                    and cabin == res["cabin"]
                ),
                None,
            )
            if kept is not None:
                total_price += kept["price"] * n
                segments.append(kept)
                continue
            flight = self._flight(info.flight_number)
            day = self._flight_day(info.flight_number, info.date)
            if day["status"] != "available":
                raise ToolError(f"Flight {info.flight_number} not available on date {info.date}")
            if day["available_seats"][cabin] < n:
                raise ToolError(f"Not enough seats on flight {info.flight_number}")
            segment = _segment(flight, info.date, day["prices"][cabin])
            total_price += segment.price * n
            segments.append(dump(segment))
        total_price -= sum(s["price"] for s in res["flights"]) * n
        self._pay_change(res, payment_id, total_price)
        res["flights"], res["cabin"] = segments, cabin
        return res

    def update_reservation_passengers(
        self, reservation_id: str, passengers: list[PassengerRef]
    ) -> dict[str, Any]:
        """Replace the passengers' details; the number of passengers cannot change."""
        passengers = _models(Passenger, passengers)
        res = self._reservation(reservation_id, edit=True)
        if len(passengers) != len(res["passengers"]):
            raise ToolError("Number of passengers does not match")
        res["passengers"] = [_plain(p) for p in passengers]
        return res

    def send_certificate(self, user_id: str, amount: int) -> str:
        """Give a user a travel certificate of an amount, as compensation."""
        user = self._user(user_id)
        for cid in CERTIFICATE_IDS:
            if cid not in user["payment_methods"]:
                certificate = dump(Certificate(id=cid, amount=amount, source="certificate"))
                self.edit("users", user_id)["payment_methods"][cid] = certificate
                return f"Certificate {cid} added to user {user_id} with amount {amount}."
        raise ToolError("Too many certificates")

    # -- helpers ----------------------------------------------------------------------------

    # `edit=True` hands out the environment's own copy of a record, to be changed.

    def _user(self, user_id: str) -> dict[str, Any]:
        if user_id not in self.db["users"]:
            raise ToolError(f"User {user_id} not found")
        return self.db["users"][user_id]

    def _reservation(self, reservation_id: str, edit: bool = False) -> dict[str, Any]:
        if reservation_id not in self.db["reservations"]:
            raise ToolError(f"Reservation {reservation_id} not found")
        if edit:
            return self.edit("reservations", reservation_id)
        return self.db["reservations"][reservation_id]

    def _flight(self, flight_number: str) -> dict[str, Any]:
        if flight_number not in self.db["flights"]:
            raise ToolError(f"Flight {flight_number} not found")
        return self.db["flights"][flight_number]

    def _flight_day(self, flight_number: str, date: str) -> dict[str, Any]:
        flight = self._flight(flight_number)
        if date not in flight["dates"]:
            raise ToolError(f"Flight {flight_number} not found on date {date}")
        return flight["dates"][date]

    def _direct(
        self,
        date: str,
        origin: str | None,
        destination: str | None,
        leave_after: str | None = None,
    ) -> list[dict[str, Any]]:
        """Bookable flights on a date, as search results (the date left null)."""
        found = []
        for f in self.db["flights"].values():
            if (
                (origin is None or f["origin"] == origin)
                and (destination is None or f["destination"] == destination)
                and date in f["dates"]
                and f["dates"][date]["status"] == "available"
                and (leave_after is None or f["scheduled_departure_time_est"] >= leave_after)
            ):
                day = f["dates"][date]
                found.append(
                    {
                        "flight_number": f["flight_number"],
                        "origin": f["origin"],
                        "destination": f["destination"],
                        "status": "available",
                        "scheduled_departure_time_est": f["scheduled_departure_time_est"],
                        "scheduled_arrival_time_est": f["scheduled_arrival_time_est"],
                        "date": None,
                        "available_seats": day["available_seats"],
                        "prices": day["prices"],
                    }
                )
        return found

    def _pay_change(self, res: dict[str, Any], payment_id: str, price: Any) -> None:
        """Pay (or refund, when negative) a change with one method of the reservation's user;
        a zero price leaves no payment line."""
        methods = self.db["users"][res["user_id"]]["payment_methods"]
        if payment_id not in methods:
            raise ToolError("Payment method not found")
        method = methods[payment_id]
        if method["source"] == "certificate":
            raise ToolError("Certificate cannot be used to update reservation")
        if method["source"] == "gift_card" and method["amount"] < price:
            raise ToolError("Gift card balance is not enough")
        if method["source"] == "gift_card":
            self.edit("users", res["user_id"])["payment_methods"][payment_id]["amount"] -= price
        if price != 0:
            res["payment_history"].append(dump(Payment(payment_id=payment_id, amount=price)))


def _models(model: type[BaseModel], items: Any) -> Any:
    """Objects given as dicts become `model`s (extra keys dropped, lax coercion); a list that
    is not all dicts stays as given, as in the original."""
    if all(isinstance(i, dict) for i in items):
        return [model(**i) for i in items]
    return items


def _plain(value: Any) -> Any:
    return dump(value) if isinstance(value, BaseModel) else copy.deepcopy(value)


def _segment(flight: dict[str, Any], date: str, price: Any) -> ReservationFlight:
    return ReservationFlight(
        flight_number=flight["flight_number"],
        origin=flight["origin"],
        destination=flight["destination"],
        date=date,
        price=price,
    )
