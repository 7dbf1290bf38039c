"""The airline, retail and mock environments over the benchmark data: tool names and
arguments as the tasks use them, the policy's rule checks, determinism, atomic writes."""

from __future__ import annotations

import doctest
import inspect

import pytest

import flowstate.bench.tau.data
import flowstate.bench.tau.plan
from flowstate.bench.tau.data import TauData, db_hash, default_root
from flowstate.bench.tau.env import make_env, safe_eval
from flowstate.bench.tau.scoring import replay

SAMPLE = 6  # tasks per domain whose reference actions are replayed here


@pytest.fixture(scope="module")
def data() -> TauData:
    if default_root() is None:
        pytest.skip("the tau-bench data folder (../shared/data) is not here")
    return TauData.locate()


def test_module_doctests() -> None:
    for module in (flowstate.bench.tau.data, flowstate.bench.tau.plan):
        assert doctest.testmod(module).failed == 0


@pytest.mark.parametrize("domain", ["airline", "retail", "mock"])
def test_every_reference_call_names_a_tool_and_its_parameters(data: TauData, domain: str) -> None:
    env = make_env(domain, data)
    tools = {t.name: t for t in env.tools()}
    for task in data.tasks(domain):
        for action in task.actions:
            assert action.name in tools, (task.id, action.name)
            params = set(inspect.signature(getattr(env, action.name)).parameters)
            assert set(action.arguments) <= params, (task.id, action.name)
    assert all(not t.consequential for t in tools.values())  # no approver in tau-bench


@pytest.mark.parametrize("domain", ["airline", "retail"])
def test_reference_writes_of_a_sample_succeed_and_change_the_database(
    data: TauData, domain: str
) -> None:
    env0 = make_env(domain, data)
    tasks = [t for t in data.tasks(domain) if any(a.name in env0.WRITE_TOOLS for a in t.actions)]
    for task in tasks[:SAMPLE]:
        env = replay(make_env(domain, data, task), task.actions)
        writes = [c for c in env.calls if c.name in env.WRITE_TOOLS]
        assert writes and all(c.ok for c in writes), (task.id, [c.error for c in writes])
        assert env.hash() == db_hash(env.db) != data.db_hash(domain)


def test_the_hash_shortcut_equals_the_full_hash_after_reads(data: TauData) -> None:
    env = make_env("airline", data)
    env.call("get_user_details", {"user_id": "mia_li_3668"})
    env.call("search_onestop_flight", {"origin": "JFK", "destination": "SEA", "date": "2024-05-20"})
    assert env.hash() == db_hash(env.db) == data.db_hash("airline")


def test_environments_share_the_loaded_database_until_they_write(data: TauData) -> None:
    reader, writer = make_env("retail", data), make_env("retail", data)
    assert reader.db is writer.db is data.shared_db("retail")
    cancel = {"order_id": "#W4776164", "reason": "no longer needed"}  # a pending order
    assert not writer.call("cancel_pending_order", cancel).is_error
    assert writer.db is not reader.db and writer.db["orders"]["#W4776164"]["status"] == "cancelled"
    assert reader.db["orders"]["#W4776164"]["status"] == "pending"
    assert db_hash(data.shared_db("retail")) == data.db_hash("retail") != writer.hash()


def test_a_refused_write_changes_nothing(data: TauData) -> None:
    env = make_env("airline", data)
    user = env.db["users"]["mia_li_3668"]
    bad_total = {
        "user_id": "mia_li_3668",
        "origin": "JFK",
        "destination": "SEA",
        "flight_type": "one_way",
        "cabin": "economy",
        "flights": [
            {"flight_number": "HAT136", "date": "2024-05-20"},
            {"flight_number": "HAT039", "date": "2024-05-20"},
        ],
        "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
        "payment_methods": [
            {"payment_id": "certificate_7504069", "amount": 250},
            {"payment_id": "credit_card_4421486", "amount": 4},
        ],
        "total_baggages": 0,
        "nonfree_baggages": 0,
        "insurance": "no",
    }
    result = env.call("book_reservation", bad_total)
    assert result.is_error and "add up to 254, but the total price is 255" in result.output
    assert env.calls[-1].error is not None
    assert db_hash(env.db) == data.db_hash("airline") and "certificate_7504069" in str(user)


def test_booking_is_deterministic_and_follows_the_payment_rules(data: TauData) -> None:
    [task] = [t for t in data.tasks("airline") if t.id == "20"]
    booked = [replay(make_env("airline", data, task), task.actions) for _ in range(2)]
    assert booked[0].hash() == booked[1].hash()
    [new] = set(booked[0].db["reservations"]) - set(data.db("airline")["reservations"])
    res = booked[0].db["reservations"][new]
    assert res["created_at"] == "2024-05-15T15:00:00" and len(new) == 6
    assert "certificate_7504069" not in booked[0].db["users"]["mia_li_3668"]["payment_methods"]
    env = make_env("airline", data)
    two_certificates = [
        {"payment_id": "certificate_7504069", "amount": 250},
        {"payment_id": "certificate_4856383", "amount": 5},
    ]
    args = {**task.actions[-1].arguments, "payment_methods": two_certificates}
    assert "at most 1 certificate" in env.call("book_reservation", args).output


def test_airline_change_rules(data: TauData) -> None:
    env = make_env("airline", data)
    res = env.db["reservations"]["4WQ150"]  # 3 passengers, 5 bags
    fewer = {"reservation_id": "4WQ150", "passengers": res["passengers"][:2]}
    assert "cannot be changed" in env.call("update_reservation_passengers", fewer).output
    bags = {"reservation_id": "4WQ150", "total_baggages": 4, "nonfree_baggages": 0}
    out = env.call("update_reservation_baggages", {**bags, "payment_id": "gift_card_3576581"})
    assert "added but not removed" in out.output
    assert not env.call("cancel_reservation", {"reservation_id": "4WQ150"}).is_error
    assert "cancelled" in env.call("cancel_reservation", {"reservation_id": "4WQ150"}).output
    res = env.db["reservations"]["4WQ150"]  # the environment's own copy since its first write
    refunds = [p for p in res["payment_history"] if p["amount"] < 0]
    assert refunds == [{"payment_id": "gift_card_3576581", "amount": -4986}]


def test_retail_rules(data: TauData) -> None:
    env = make_env("retail", data)
    delivered = "#W4316152"  # two tea kettles, paid with a gift card worth 17 now
    assert (
        "only a pending order"
        in env.call(
            "cancel_pending_order", {"order_id": delivered, "reason": "no longer needed"}
        ).output
    )
    bad_reason = env.call("cancel_pending_order", {"order_id": delivered, "reason": "meh"})
    assert bad_reason.is_error and "invalid arguments" in bad_reason.output
    swap = {"order_id": delivered, "item_ids": ["7292993796"], "payment_method_id": "x"}
    other_product = env.call("exchange_delivered_order_items", {**swap, "new_item_ids": ["1"]})
    assert "is not a variant of Tea Kettle" in other_product.output
    both = {
        **swap,
        "item_ids": ["7292993796", "7292993796"],
        "new_item_ids": ["3761330360", "9647374798"],  # +6.32 and +14.78
        "payment_method_id": "gift_card_7245904",
    }
    assert "cannot cover 21.1" in env.call("exchange_delivered_order_items", both).output
    one = {**both, "item_ids": ["7292993796"], "new_item_ids": ["9647374798"]}
    assert not env.call("exchange_delivered_order_items", one).is_error
    again = env.call("exchange_delivered_order_items", one)
    assert "exchange requested; only a delivered order" in again.output


def test_retail_refund_goes_to_the_original_method_or_a_gift_card(data: TauData) -> None:
    env = make_env("retail", data)
    order = env.db["orders"]["#W5866402"]  # delivered, paid with paypal_8049766
    ret = {"order_id": "#W5866402", "item_ids": [order["items"][0]["item_id"]]}
    card = env.call(
        "return_delivered_order_items", {**ret, "payment_method_id": "credit_card_9753331"}
    )
    assert "original payment method or a gift card" in card.output
    gift = {**ret, "payment_method_id": "gift_card_7794233"}
    assert not env.call("return_delivered_order_items", gift).is_error
    order = env.db["orders"]["#W5866402"]
    assert order["status"] == "return requested"
    assert order["return_payment_method_id"] == "gift_card_7794233"


def test_calculate_is_arithmetic_only() -> None:
    assert safe_eval("2 * ((350 - 122) + (499 - 127))") == 1200
    for hostile in ("__import__('os').system('true')", "2 ** 99999999", "open('x')"):
        with pytest.raises(Exception, match="only numbers|not an arithmetic"):
            safe_eval(hostile)


def test_mock_initial_state_is_applied_and_is_not_the_agents(data: TauData) -> None:
    [task] = [t for t in data.tasks("mock") if t.id == "update_task_with_message_history"]
    env = make_env("mock", data, task)
    assert env.db["tasks"]["task_2"]["title"] == "Project Review" and env.calls == []
    assert env.hash() == db_hash(env.db) != data.db_hash("mock")
