"""The airline, retail and mock environments over the benchmark data: tool names and
arguments as the tasks use them, the policy's rule checks, determinism, atomic writes."""

from __future__ import annotations

import doctest
import inspect

import pytest

import flowstate_bench.tau.data
import flowstate_bench.tau.plan
from flowstate_bench.tau.airline import AirlineEnv
from flowstate_bench.tau.data import TauData, db_hash, default_root
from flowstate_bench.tau.env import make_env, safe_eval
from flowstate_bench.tau.retail import RetailEnv
from flowstate_bench.tau.scoring import replay

SAMPLE = 6  # tasks per domain whose database is hashed in full, to check the fast hash
WRITES = {"airline": AirlineEnv.WRITE_TOOLS, "retail": RetailEnv.WRITE_TOOLS}


@pytest.fixture(scope="module")
def data() -> TauData:
    if default_root() is None:
        pytest.skip("the tau-bench data folder (../shared/data) is not here")
    return TauData.locate()


def test_module_doctests() -> None:
    for module in (flowstate_bench.tau.data, flowstate_bench.tau.plan):
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


# Reference calls that fail by design: the user gives a wrong email, name or id, or the
# reference tries a change the policy forbids before the one it allows.
FAILING_REFERENCE_CALLS = {
    ("retail", "2"): ["get_product_details"],
    ("retail", "3"): ["get_product_details"],
    ("retail", "4"): ["get_product_details"],
    ("retail", "35"): ["find_user_id_by_email"],
    ("retail", "37"): ["find_user_id_by_email"],
    ("retail", "38"): ["find_user_id_by_email"],
    ("retail", "39"): ["find_user_id_by_name_zip"],
    ("retail", "46"): ["get_order_details", "get_order_details"],
    ("retail", "47"): ["get_order_details", "get_order_details"],
    ("retail", "54"): ["find_user_id_by_email"],
    ("retail", "55"): ["find_user_id_by_email"],
    ("retail", "64"): ["exchange_delivered_order_items"],  # the order is still pending
    ("retail", "67"): ["find_user_id_by_name_zip", "find_user_id_by_name_zip"],
    ("retail", "68"): ["find_user_id_by_name_zip"],
    ("retail", "105"): ["exchange_delivered_order_items"],  # gift card 17.0 < 21.1 more
}


def test_every_reference_call_runs_except_the_ones_meant_to_fail(data: TauData) -> None:
    failing = {}
    for domain in ("airline", "retail", "mock"):
        for task in data.tasks(domain):
            env = replay(make_env(domain, data, task), task.actions)
            errors = [c.name for c in env.calls if not c.ok]
            if errors:
                failing[(domain, task.id)] = errors
            assert len(env.calls) == len(task.actions)  # every argument set was valid
    assert failing == FAILING_REFERENCE_CALLS


@pytest.mark.parametrize("domain", ["airline", "retail"])
def test_reference_writes_change_the_database_and_the_hash_stays_exact(
    data: TauData, domain: str
) -> None:
    writing = [t for t in data.tasks(domain) if any(a.name in WRITES[domain] for a in t.actions)]
    for task in writing[:SAMPLE]:
        env = replay(make_env(domain, data, task), task.actions)
        assert env.hash() == db_hash(env.db) != data.db_hash(domain)


def test_the_hash_shortcut_equals_the_full_hash_after_reads(data: TauData) -> None:
    env = make_env("airline", data)
    env.call("get_user_details", {"user_id": "mia_li_3668"})
    env.call("search_onestop_flight", {"origin": "JFK", "destination": "SEA", "date": "2024-05-20"})
    assert env.hash() == db_hash(env.db) == data.db_hash("airline")


def test_environments_share_records_until_they_change_them(data: TauData) -> None:
    snapshot = data.snapshot("retail")
    reader, writer = make_env("retail", data), make_env("retail", data)
    order = "#W4776164"  # a pending order
    assert reader.db["orders"][order] is writer.db["orders"][order] is snapshot.db["orders"][order]
    assert not writer.call(
        "cancel_pending_order", {"order_id": order, "reason": "ordered by mistake"}
    ).is_error
    assert writer.db["orders"][order]["status"] == "cancelled"
    assert (
        reader.db["orders"][order]["status"] == snapshot.db["orders"][order]["status"] == "pending"
    )
    assert writer.hash() == db_hash(writer.db) != reader.hash() == snapshot.hash


def test_replaying_every_task_never_changes_the_shared_snapshot(data: TauData) -> None:
    for domain in ("airline", "retail", "mock"):
        before = data.db_hash(domain)
        for task in data.tasks(domain):
            replay(make_env(domain, data, task), task.actions)
        assert db_hash(data.snapshot(domain).db) == before, domain


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
    [new] = set(booked[0].db["reservations"]) - set(data.snapshot("airline").db["reservations"])
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
