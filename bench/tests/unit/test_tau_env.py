"""The airline, retail and mock environments over the benchmark data: tool names and
arguments as the tasks use them, the original's behaviour where it surprises (what it
executes, accepts, keeps and generates), determinism, a shared snapshot never written.
`test_tau_parity.py` replays the original's recorded episodes call for call."""

from __future__ import annotations

import doctest
import inspect
import json
from typing import Any

import pytest

import flowstate_bench.tau.arith
import flowstate_bench.tau.data
import flowstate_bench.tau.parity
import flowstate_bench.tau.plan
from flowstate.errors import UsageError
from flowstate_bench.tau.airline import AirlineEnv
from flowstate_bench.tau.arith import calculate
from flowstate_bench.tau.data import TauData, db_hash
from flowstate_bench.tau.domains import make_env
from flowstate_bench.tau.env import EnvOptions
from flowstate_bench.tau.retail import RetailEnv
from flowstate_bench.tau.scoring import replay

SAMPLE = 6  # tasks per domain whose database is hashed in full, to check the fast hash
WRITES = {"airline": AirlineEnv.WRITE_TOOLS, "retail": RetailEnv.WRITE_TOOLS}


@pytest.fixture(scope="module")
def data(tau_data: TauData) -> TauData:
    return tau_data


def test_module_doctests() -> None:
    modules = (
        flowstate_bench.tau.arith,
        flowstate_bench.tau.data,
        flowstate_bench.tau.parity,
        flowstate_bench.tau.plan,
    )
    for module in modules:
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


MIA: dict[str, Any] = {
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
        {"payment_id": "credit_card_4421486", "amount": 5},
    ],
    "total_baggages": 0,
    "nonfree_baggages": 0,
    "insurance": "no",
}


def _seats(env, number: str, date: str = "2024-05-20") -> int:
    return env.db["flights"][number]["dates"][date]["available_seats"]["economy"]


def test_a_refused_write_changes_nothing(data: TauData) -> None:
    env = make_env("airline", data)
    short = {**MIA, "payment_methods": [{"payment_id": "certificate_7504069", "amount": 250}]}
    result = env.call("book_reservation", short)
    assert result.is_error
    assert (
        result.output == "Error: Payment amount does not add up, total price is 255, but paid 250"
    )
    assert env.calls[-1].error == result.output
    assert env.hash() == db_hash(env.db) == data.db_hash("airline") and env.changed() == {}


def test_bookings_take_the_originals_ids_and_seats_and_pay_as_asked(data: TauData) -> None:
    env = make_env("airline", data)
    before = _seats(env, "HAT136")
    booked = json.loads(env.call("book_reservation", MIA).output)
    assert booked["reservation_id"] == "HATHAT" and booked["status"] is None
    assert booked["created_at"] == "2024-05-15T15:00:00"
    assert _seats(env, "HAT136") == before - 1
    assert "certificate_7504069" not in env.db["users"]["mia_li_3668"]["payment_methods"]
    # The policy allows one certificate and one credit card per booking; the API does not
    # check it (nor does the original): the agent's mistake executes, the database shows it.
    two = [
        {"payment_id": "certificate_4856383", "amount": 100},
        {"payment_id": "credit_card_4421486", "amount": 100},
        {"payment_id": "credit_card_1955700", "amount": 55},
    ]
    second = env.call("book_reservation", {**MIA, "payment_methods": two})
    assert not second.is_error and json.loads(second.output)["reservation_id"] == "HATHAU"
    card = [{"payment_id": "credit_card_4421486", "amount": 255}]
    assert not env.call("book_reservation", {**MIA, "payment_methods": card}).is_error
    assert env.db["users"]["mia_li_3668"]["reservations"][-3:] == ["HATHAT", "HATHAU", "HATHAV"]
    last = env.call("book_reservation", {**MIA, "payment_methods": card})
    assert last.output == "Error: Too many reservations"
    six = {**MIA, "passengers": MIA["passengers"] * 6}  # the policy's limit is five
    six["payment_methods"] = [{"payment_id": "credit_card_4421486", "amount": 6 * 255}]
    assert not make_env("airline", data).call("book_reservation", six).is_error
    assert _seats(env, "HAT136") == before - 3


def test_extra_keys_in_nested_objects_are_dropped_and_strings_are_kept(data: TauData) -> None:
    env = make_env("airline", data)
    flights = [{**f, "origin": "JFK", "destination": "SEA"} for f in MIA["flights"]]
    booked = env.call("book_reservation", {**MIA, "flights": flights, "total_baggages": "2"})
    assert not booked.is_error
    res = env.db["reservations"]["HATHAT"]
    assert res["total_baggages"] == 2  # a booking builds a record: the value is coerced
    bags = {"reservation_id": "HATHAT", "total_baggages": "3", "nonfree_baggages": 0}
    card = {"payment_id": "credit_card_4421486"}
    assert not env.call("update_reservation_baggages", {**bags, **card}).is_error
    assert env.db["reservations"]["HATHAT"]["total_baggages"] == "3"  # an update does not


def test_one_stop_connections_may_leave_the_minute_the_first_flight_lands(data: TauData) -> None:
    env = make_env("airline", data)
    out = env.call(
        "search_onestop_flight", {"origin": "ATL", "destination": "SEA", "date": "2024-05-20"}
    )
    pairs = [(a["flight_number"], b["flight_number"]) for a, b in json.loads(out.output)]
    first, second = env.db["flights"]["HAT004"], env.db["flights"]["HAT099"]
    assert first["scheduled_arrival_time_est"] == second["scheduled_departure_time_est"]
    assert ("HAT004", "HAT099") in pairs


def test_airline_executes_what_the_policy_forbids_but_the_api_allows(data: TauData) -> None:
    env = make_env("airline", data)
    res = env.db["reservations"]["4WQ150"]  # 3 passengers, 5 bags, paid 4986
    fewer = {"reservation_id": "4WQ150", "passengers": res["passengers"][:2]}
    out = env.call("update_reservation_passengers", fewer)
    assert out.output == "Error: Number of passengers does not match"
    bags = {"reservation_id": "4WQ150", "total_baggages": 4, "nonfree_baggages": 0}
    card = {"payment_id": "gift_card_3576581"}
    assert not env.call("update_reservation_baggages", {**bags, **card}).is_error
    for _ in range(2):  # cancelling twice refunds every line again
        assert not env.call("cancel_reservation", {"reservation_id": "4WQ150"}).is_error
    res = env.db["reservations"]["4WQ150"]
    assert [p["amount"] for p in res["payment_history"]] == [4986, -4986, -4986, 4986]
    card = env.db["users"]["chen_jackson_3290"]["payment_methods"]["gift_card_3576581"]
    snapshot = data.snapshot("airline").db["users"]["chen_jackson_3290"]["payment_methods"]
    assert card == snapshot["gift_card_3576581"]  # refunds are left to the payment system
    assert "users" not in env.changed()
    assert res["total_baggages"] == 4 and res["status"] == "cancelled"


def test_a_flight_change_keeps_the_seats_and_gift_cards_are_not_rounded(data: TauData) -> None:
    [task] = [t for t in data.tasks("airline") if t.id == "11"]
    env = make_env("airline", data, task)
    change = next(a for a in task.actions if a.name == "update_reservation_flights")
    seats = {(f["flight_number"], f["date"]) for f in change.arguments["flights"]}
    before = {k: _seats(env, *k) for k in seats}
    assert not env.call(change.name, change.arguments).is_error
    assert {k: _seats(env, *k) for k in seats} == before
    [user] = env.changed()["users"].values()
    amounts = [m["amount"] for m in user["payment_methods"].values() if "amount" in m]
    assert all(isinstance(a, float) for a in amounts)


def test_calls_fail_as_the_original_fails_them(data: TauData) -> None:
    env = make_env("airline", data)
    assert env.call("think", {"thought": "x"}).output == "Error: Tool 'think' not found."
    extra = env.call("get_user_details", {"user_id": "mia_li_3668", "verbose": True})
    assert extra.output == (
        "Error: AirlineTools.get_user_details() got an unexpected keyword argument 'verbose'"
    )
    missing = env.call("update_reservation_baggages", {"reservation_id": "4WQ150"})
    assert missing.output == (
        "Error: AirlineTools.update_reservation_baggages() missing 3 required positional "
        "arguments: 'total_baggages', 'nonfree_baggages', and 'payment_id'"
    )
    assert env.call("get_user_details", {"user_id": "nobody"}).output == (
        "Error: User nobody not found"
    )
    assert all(c.error for c in env.calls) and len(env.calls) == 3  # the unknown tool is not


def test_retail_executes_what_the_policy_forbids_but_the_api_allows(data: TauData) -> None:
    env = make_env("retail", data)
    pending = "#W4776164"
    item = env.db["orders"][pending]["items"][0]
    product = env.db["products"][item["product_id"]]
    other = next(v for v in product["variants"].values() if v["available"] and v is not item)
    method = env.db["orders"][pending]["payment_history"][0]["payment_method_id"]
    swap = {"order_id": pending, "item_ids": [item["item_id"]], "new_item_ids": [other["item_id"]]}
    assert not env.call(
        "modify_pending_order_items", {**swap, "payment_method_id": method}
    ).is_error
    address = {"address1": "1 Main St", "address2": "", "city": "Austin", "state": "TX"}
    moved = env.call(
        "modify_pending_order_address",
        {"order_id": pending, **address, "country": "USA", "zip": "78701"},
    )
    assert not moved.is_error  # "pending (item modified)" is still pending to the API
    delivered = "#W5866402"
    original = env.db["orders"][delivered]["payment_history"][0]["payment_method_id"]
    empty = {"order_id": delivered, "item_ids": [], "payment_method_id": original}
    assert not env.call("return_delivered_order_items", empty).is_error
    assert env.db["orders"][delivered]["return_items"] == []
    same = {"order_id": "#W4817420", "item_ids": ["6777246137"], "new_item_ids": ["6777246137"]}
    card = env.db["orders"]["#W4817420"]["payment_history"][0]["payment_method_id"]
    exchanged = env.call("exchange_delivered_order_items", {**same, "payment_method_id": card})
    assert json.loads(exchanged.output)["exchange_price_difference"] == 0.0


def test_multi_item_modify_keeps_the_original_bug_unless_fixed(data: TauData) -> None:
    [task] = [t for t in data.tasks("retail") if t.id == "36"]
    action = next(a for a in task.actions if a.name == "modify_pending_order_items")
    wanted = action.arguments["new_item_ids"]
    prices = {}
    for fixed in (False, True):
        env = make_env("retail", data, options=EnvOptions(fix_multi_item_modify=fixed))
        assert not env.call(action.name, action.arguments).is_error
        items = {i["item_id"]: i for i in env.db["orders"][action.arguments["order_id"]]["items"]}
        prices[fixed] = [items[i]["price"] for i in wanted]
    variants = {
        i: v
        for p in data.snapshot("retail").db["products"].values()
        for i, v in p["variants"].items()
    }
    assert prices[True] == [variants[i]["price"] for i in wanted]
    assert prices[False] == [variants[wanted[-1]]["price"]] * len(wanted)


def test_calculate_answers_as_python_and_never_evaluates_names() -> None:
    assert calculate("2 * ((350 - 122) + (499 - 127))") == "1200.0"
    assert calculate("0.1 + 0.2") == "0.3"
    with pytest.raises(ValueError, match="Invalid characters"):
        calculate("__import__('os').system('true')")
    with pytest.raises(ZeroDivisionError, match="division by zero"):
        calculate("1 / 0")
    with pytest.raises(OverflowError):  # refused at once, not computed
        calculate("9 ** 9 ** 9")


def test_without_the_tau3_airline_file_the_v1_tables_are_the_fallback(
    data: TauData, tmp_path
) -> None:
    (tmp_path / "tau2" / "airline").mkdir(parents=True)
    for name in ("tasks.json", "policy.md", "split_tasks.json"):
        (tmp_path / "tau2" / "airline" / name).symlink_to(data.domain_dir("airline") / name)
    (tmp_path / "tau-v1").symlink_to(data.root / "tau-v1")
    fallback = TauData(tmp_path)
    assert fallback.db_source("airline").is_dir() and data.db_source("airline").is_file()
    day = "2024-05-11"
    status = [
        d.snapshot("airline").db["flights"]["HAT018"]["dates"][day]["status"]
        for d in (data, fallback)
    ]
    assert status == ["delayed", "landed"]  # one of the two records that differ


def test_the_data_folder_must_be_given() -> None:
    with pytest.raises(UsageError, match="FLOWSTATE_TAU_DATA"):
        TauData.locate(None)


def test_mock_initial_state_is_applied_and_is_not_the_agents(data: TauData) -> None:
    [task] = [t for t in data.tasks("mock") if t.id == "update_task_with_message_history"]
    env = make_env("mock", data, task)
    assert env.db["tasks"]["task_2"]["title"] == "Project Review" and env.calls == []
    assert env.hash() == db_hash(env.db) != data.db_hash("mock")


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        (
            "requestor",
            "Error: tau2.environment.environment.Environment.make_tool_call() got multiple "
            "values for keyword argument 'requestor'",
        ),
        (
            "tool_name",
            "Error: Environment.make_tool_call() got multiple values for argument 'tool_name'",
        ),
    ],
)
def test_an_argument_named_like_the_dispatchers_own_collides_as_in_the_original(
    tau_data: TauData, argument: str, message: str
) -> None:
    env = make_env("airline", tau_data)
    result = env.call("get_user_details", {"user_id": "mia_li_3668", argument: "x"})
    assert (result.output, result.is_error) == (message, True)
