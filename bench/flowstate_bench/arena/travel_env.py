"""TravelPlanner's six tools over its CSV database (the MIT-licensed release).

Tables are read with pandas and `dropna()` over all columns before the columns are picked (as
upstream; it drops the accommodations without house rules), filtered with exact string
equality and rendered with `to_string(index=False)`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from flowstate.engine.tools import Tool
from flowstate.errors import UsageError

FLIGHTS = "flights/clean_Flights_2022.csv"
FLIGHT_COLUMNS = [
    "Flight Number", "Price", "DepTime", "ArrTime", "ActualElapsedTime", "FlightDate",
    "OriginCityName", "DestCityName", "Distance",
]  # fmt: skip
RESTAURANT_COLUMNS = ["Name", "Average Cost", "Cuisines", "Aggregate Rating", "City"]
ACCOMMODATION_COLUMNS = [
    "NAME", "price", "room type", "house_rules", "minimum nights", "maximum occupancy",
    "review rate number", "city",
]  # fmt: skip
ATTRACTION_COLUMNS = ["Name", "Latitude", "Longitude", "Address", "Phone", "Website", "City"]


@dataclass(frozen=True)
class ToolCall:
    name: str
    args: dict[str, Any]
    result: str


class TravelDB:
    """The CSV folder: accommodations/, attractions/, restaurants/, googleDistanceMatrix/,
    background/ and, when supplied, flights/."""

    def __init__(self, root: Path) -> None:
        for part in ("restaurants/clean_restaurant_2022.csv", "background/citySet_with_states.txt"):
            if not (root / part).is_file():
                raise UsageError(f"--travel-db {root} has no {part}")
        self.root = root

    def _table(self, path: str, columns: list[str]) -> Any:
        import pandas as pd

        return pd.read_csv(self.root / path).dropna()[columns]

    @cached_property
    def restaurants(self) -> Any:
        return self._table("restaurants/clean_restaurant_2022.csv", RESTAURANT_COLUMNS)

    @cached_property
    def accommodations(self) -> Any:
        return self._table("accommodations/clean_accommodations_2022.csv", ACCOMMODATION_COLUMNS)

    @cached_property
    def attractions(self) -> Any:
        return self._table("attractions/attractions.csv", ATTRACTION_COLUMNS)

    @cached_property
    def flights(self) -> Any:
        if not (self.root / FLIGHTS).is_file():
            raise FileNotFoundError("flights database not installed")
        return self._table(FLIGHTS, FLIGHT_COLUMNS)

    @cached_property
    def distances(self) -> Any:
        import pandas as pd

        return pd.read_csv(self.root / "googleDistanceMatrix/distance.csv")

    @cached_property
    def states(self) -> dict[str, list[str]]:
        cities: dict[str, list[str]] = {}
        text = (self.root / "background/citySet_with_states.txt").read_text(encoding="utf-8")
        for line in text.splitlines():
            if "\t" in line:
                city, state = line.split("\t", 1)
                cities.setdefault(state.strip(), []).append(city.strip())
        return cities

    # -- the tools, by their TravelPlanner names ---------------------------------------------

    def flight_search(self, origin: str, destination: str, date: str) -> str:
        f = self.flights
        hits = f[(f["OriginCityName"] == origin) & (f["DestCityName"] == destination)]
        hits = hits[hits["FlightDate"] == date]
        if hits.empty:
            return f"There is no flight from {origin} to {destination} on {date}."
        return hits.to_string(index=False)

    def restaurant_search(self, city: str) -> str:
        hits = self.restaurants[self.restaurants["City"] == city]
        return (
            hits.to_string(index=False)
            if not hits.empty
            else "There is no restaurant in this city."
        )

    def accommodation_search(self, city: str) -> str:
        hits = self.accommodations[self.accommodations["city"] == city]
        # "attraction" (sic) is what TravelPlanner answers here.
        return (
            hits.to_string(index=False)
            if not hits.empty
            else "There is no attraction in this city."
        )

    def attraction_search(self, city: str) -> str:
        hits = self.attractions[self.attractions["City"] == city]
        return (
            hits.to_string(index=False)
            if not hits.empty
            else "There is no attraction in this city."
        )

    def distance_matrix(self, origin: str, destination: str, mode: str) -> str:
        origin, destination = _bare(origin), _bare(destination)
        d = self.distances
        row = d[(d["origin"] == origin) & (d["destination"] == destination)]
        duration = distance = cost = None
        if not row.empty:
            duration, distance = row["duration"].values[0], row["distance"].values[0]
            if _missing(duration) or _missing(distance):
                duration = distance = None
            elif "day" not in str(duration):
                km = float(str(distance).replace("km", "").replace(",", "").strip())
                cost = int(km * 0.05) if mode == "driving" else int(km)
        return (
            f"origin: {origin}\ndestination: {destination}\ncost: {cost}\n"
            f"duration: {duration}\ndistance: {distance}"
        )

    def city_search(self, state: str) -> str:
        cities = self.states.get(state)
        return ", ".join(cities) if cities else "Invalid State"


def _bare(city: str) -> str:
    return re.sub(r"\(.*\)", "", city).strip()


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


@dataclass
class TravelEnv:
    """The tools of one group; `calls` is the current traveler's scratchpad."""

    db: TravelDB
    calls: list[ToolCall] = field(default_factory=list)

    def begin(self) -> None:
        self.calls = []

    def call(self, name: str, fn: Any, **args: Any) -> str:
        try:
            result = str(fn(**args))
        except Exception as e:  # TravelPlanner reports any failure as the tool's text
            result = f"Error executing {name}: {e}"
        self.calls.append(ToolCall(name, args, result))
        return result

    def tools(self) -> list[Tool]:
        db = self.db

        def FlightSearch(origin: str, destination: str, date: str) -> str:  # noqa: N802
            """Flights from origin to destination on a date (YYYY-MM-DD)."""
            return self.call(
                "FlightSearch", db.flight_search, origin=origin, destination=destination, date=date
            )

        def RestaurantSearch(city: str) -> str:  # noqa: N802
            """Restaurants of a city: name, average cost, cuisines, rating."""
            return self.call("RestaurantSearch", db.restaurant_search, city=city)

        def AccommodationSearch(city: str) -> str:  # noqa: N802
            """Accommodations of a city: name, price, room type, house rules, occupancy, rating."""
            return self.call("AccommodationSearch", db.accommodation_search, city=city)

        def AttractionSearch(city: str) -> str:  # noqa: N802
            """Attractions of a city."""
            return self.call("AttractionSearch", db.attraction_search, city=city)

        def DistanceMatrix(origin: str, destination: str, mode: str) -> str:  # noqa: N802
            """Distance, duration and cost between two cities; mode is driving or taxi."""
            return self.call(
                "DistanceMatrix",
                db.distance_matrix,
                origin=origin,
                destination=destination,
                mode=mode,
            )

        def CitySearch(state: str) -> str:  # noqa: N802
            """The cities of a US state."""
            return self.call("CitySearch", db.city_search, state=state)

        fns = (
            FlightSearch,
            RestaurantSearch,
            AccommodationSearch,
            AttractionSearch,
            DistanceMatrix,
            CitySearch,
        )
        return [Tool.from_function(f) for f in fns]
