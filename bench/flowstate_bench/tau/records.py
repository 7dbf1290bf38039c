"""The shapes of the τ³ records, as the original environment serialises them.

A tool's output and a database's hash depend on each record's key order, its defaults (an
absent `status` is `null`) and its number types (a gift card's `163` is `163.0`). These models
say exactly that, nothing more: the database is normalised through them once at load, new
records are built through them, and call arguments are coerced through them only where the
original coerces (a flight, passenger or payment object). Everywhere else a value reaches a
record as the agent gave it, so `"2"` bags stay the string `"2"`, as in the original.

Class names are part of the contract: a refused coercion reads `1 validation error for
Payment ...`, as the original's does. Nested objects accept and drop extra keys (a flight
object with `origin` in it books), as the original's do.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

CabinClass = Literal["business", "economy", "basic_economy"]
FlightType = Literal["round_trip", "one_way"]
Insurance = Literal["yes", "no"]


def dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(warnings=False)


# -- airline ---------------------------------------------------------------------------------

# The original's airports are a fixed list in its code, not in its database.
AIRPORTS = (
    ("SFO", "San Francisco"),
    ("JFK", "New York"),
    ("LAX", "Los Angeles"),
    ("ORD", "Chicago"),
    ("DFW", "Dallas"),
    ("DEN", "Denver"),
    ("SEA", "Seattle"),
    ("ATL", "Atlanta"),
    ("MIA", "Miami"),
    ("BOS", "Boston"),
    ("PHX", "Phoenix"),
    ("IAH", "Houston"),
    ("LAS", "Las Vegas"),
    ("MCO", "Orlando"),
    ("EWR", "Newark"),
    ("CLT", "Charlotte"),
    ("MSP", "Minneapolis"),
    ("DTW", "Detroit"),
    ("PHL", "Philadelphia"),
    ("LGA", "LaGuardia"),
)


# What the tools' schemas show the model (they validate nothing: see env.py).


class FlightRef(TypedDict):
    flight_number: str
    date: str  # YYYY-MM-DD


class PassengerRef(TypedDict):
    first_name: str
    last_name: str
    dob: str  # YYYY-MM-DD


class PaymentRef(TypedDict):
    payment_id: str
    amount: int


class Name(BaseModel):
    first_name: str
    last_name: str


class Address(BaseModel):
    address1: str
    address2: str | None = None
    city: str
    country: str
    state: str
    zip: str


class Payment(BaseModel):
    payment_id: str
    amount: int


class CreditCard(BaseModel):
    source: Literal["credit_card"]
    id: str
    brand: str
    last_four: str


class GiftCard(BaseModel):
    source: Literal["gift_card"]
    id: str
    amount: float


class Certificate(BaseModel):
    source: Literal["certificate"]
    id: str
    amount: float


class Passenger(BaseModel):
    first_name: str
    last_name: str
    dob: str


class FlightInfo(BaseModel):
    flight_number: str
    date: str


class Available(BaseModel):
    status: Literal["available"]
    available_seats: dict[CabinClass, int]
    prices: dict[CabinClass, int]


class Landed(BaseModel):
    status: Literal["landed"]
    actual_departure_time_est: str
    actual_arrival_time_est: str


class Cancelled(BaseModel):
    status: Literal["cancelled"]


class Delayed(BaseModel):
    status: Literal["delayed"]
    estimated_departure_time_est: str
    estimated_arrival_time_est: str


class Flying(BaseModel):
    status: Literal["flying"]
    actual_departure_time_est: str
    estimated_arrival_time_est: str


class OnTime(BaseModel):
    status: Literal["on time"]
    estimated_departure_time_est: str
    estimated_arrival_time_est: str


FlightDay = Annotated[
    Available | Landed | Cancelled | Delayed | Flying | OnTime, Field(discriminator="status")
]


class Flight(BaseModel):
    flight_number: str
    origin: str
    destination: str
    scheduled_departure_time_est: str
    scheduled_arrival_time_est: str
    dates: dict[str, FlightDay]


class ReservationFlight(BaseModel):
    flight_number: str
    origin: str
    destination: str
    date: str
    price: int


class User(BaseModel):
    user_id: str
    name: Name
    address: Address
    email: str
    dob: str
    payment_methods: dict[
        str, Annotated[CreditCard | GiftCard | Certificate, Field(discriminator="source")]
    ]
    saved_passengers: list[Passenger]
    membership: Literal["gold", "silver", "regular"]
    reservations: list[str]


class Reservation(BaseModel):
    reservation_id: str
    user_id: str
    origin: str
    destination: str
    flight_type: FlightType
    cabin: CabinClass
    flights: list[ReservationFlight]
    passengers: list[Passenger]
    payment_history: list[Payment]
    created_at: str
    total_baggages: int
    nonfree_baggages: int
    insurance: Insurance
    status: Literal["cancelled"] | None = None


class FlightDB(BaseModel):
    flights: dict[str, Flight]
    users: dict[str, User]
    reservations: dict[str, Reservation]


# -- retail ----------------------------------------------------------------------------------


class Variant(BaseModel):
    item_id: str
    options: dict[str, str]
    available: bool
    price: float


class Product(BaseModel):
    name: str
    product_id: str
    variants: dict[str, Variant]


class UserName(BaseModel):
    first_name: str
    last_name: str


class UserAddress(BaseModel):
    address1: str
    address2: str
    city: str
    country: str
    state: str
    zip: str


class RetailCreditCard(BaseModel):
    source: Literal["credit_card"]
    id: str
    brand: str
    last_four: str


class Paypal(BaseModel):
    source: Literal["paypal"]
    id: str


class RetailGiftCard(BaseModel):
    source: Literal["gift_card"]
    id: str
    balance: float


class RetailUser(BaseModel):
    user_id: str
    name: UserName
    address: UserAddress
    email: str
    payment_methods: dict[
        str,
        Annotated[RetailCreditCard | RetailGiftCard | Paypal, Field(discriminator="source")],
    ]
    orders: list[str]


class OrderFulfilment(BaseModel):
    tracking_id: list[str]
    item_ids: list[str]


class OrderItem(BaseModel):
    name: str
    product_id: str
    item_id: str
    price: float
    options: dict[str, str]


class OrderPayment(BaseModel):
    transaction_type: Literal["payment", "refund"]
    amount: float
    payment_method_id: str


class Order(BaseModel):
    order_id: str
    user_id: str
    address: UserAddress
    items: list[OrderItem]
    status: Literal[
        "processed",
        "pending",
        "pending (item modified)",
        "delivered",
        "cancelled",
        "exchange requested",
        "return requested",
    ]
    fulfillments: list[OrderFulfilment]
    payment_history: list[OrderPayment]
    cancel_reason: Literal["no longer needed", "ordered by mistake"] | None = None
    exchange_items: list[str] | None = None
    exchange_new_items: list[str] | None = None
    exchange_payment_method_id: str | None = None
    exchange_price_difference: float | None = None
    return_items: list[str] | None = None
    return_payment_method_id: str | None = None


class RetailDB(BaseModel):
    products: dict[str, Product]
    users: dict[str, RetailUser]
    orders: dict[str, Order]


SCHEMAS: dict[str, type[BaseModel]] = {"airline": FlightDB, "retail": RetailDB}


def normalised(domain: str, raw: dict[str, Any]) -> dict[str, Any]:
    """The database as the original holds it: every record in its model's key order, with
    its defaults and number types. Domains without a schema (mock) are returned as given."""
    schema = SCHEMAS.get(domain)
    return raw if schema is None else dump(schema.model_validate(raw))
