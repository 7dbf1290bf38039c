"""MemoryArena environments, memories and data loading, on the fixtures in bench/tests/fixtures."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from flowstate.errors import UsageError
from flowstate.tokens import encoder
from flowstate_bench.arena.data import ArenaData
from flowstate_bench.arena.formal import FormalTask, Judge
from flowstate_bench.arena.memories import BM25Memory, LongContext, NoMemory, wrap
from flowstate_bench.arena.shopping import ShoppingTask
from flowstate_bench.arena.shopping_env import SEP, ProductDB, WebShop
from flowstate_bench.arena.travel_env import TravelDB, TravelEnv

FIXTURES = Path(__file__).parents[1] / "fixtures" / "memoryarena"
TV = "B0FX000101"


@pytest.fixture(scope="module")
def products(tmp_path_factory: pytest.TempPathFactory) -> ProductDB:
    return ProductDB(FIXTURES / "product_db", tmp_path_factory.mktemp("bm25s"))


def test_shop_pages_clicks_and_purchase(products: ProductDB) -> None:
    shop = WebShop(products, "Buy a TV")
    assert shop.observation() == SEP.join(["WebShop", "Instruction:", "Buy a TV", "Search"])
    results = shop.step("search[Lumora 75 Inch 4K UHD Smart TV]")
    assert "Page 1 (Total results: " in results and "< Prev" not in results
    assert results.index(TV) < results.index("Next >") + 200  # the target is the first hit
    assert shop.step("click[B0FX999999]") == results  # not on the page: a no-op
    item = shop.step(f"click[{TV.lower()}]")
    assert "Price: $649.00" in item and "Rating: 4.7" in item and item.endswith("Buy Now")
    sub = shop.step("click[Description]")
    assert "hdmi 2.1" in sub and "Back to Search" in sub
    assert shop.step("click[< Prev]") == item
    done = shop.step("click[Buy Now]")
    assert "WEBSHOPPLUS TASK COMPLETED" in done and f"Purchase #1: {TV} ($649.00)" in done
    assert shop.purchased == TV and shop.done
    assert "session is over" in shop.step("click[back to search]")
    assert [t.action for t in shop.trace][-1] == "click[Buy Now]" and shop.trace[-1].done


def test_shop_soft_exit_after_seven_equal_actions(products: ProductDB) -> None:
    shop = WebShop(products, "x")
    for _ in range(7):
        shop.step("click[nothing here]")
    assert shop.done and shop.purchased is None and len(shop.trace) == 7


def test_shop_index_is_cached_and_reloaded(tmp_path: Path) -> None:
    first = ProductDB(FIXTURES / "product_db", tmp_path)
    hits = first.search("soundbar compact bluetooth")
    assert hits[0] == "B0FX000201"
    assert any(p.name.startswith("bm25s-") for p in tmp_path.iterdir())
    assert ProductDB(FIXTURES / "product_db", tmp_path).search("soundbar compact bluetooth") == hits


def test_shopping_prompt_and_chunks_follow_the_official_layout(products: ProductDB) -> None:
    task = ArenaData(FIXTURES).tasks("bundled_shopping")[0]
    env = ShoppingTask(task, products)
    prompt = env.prompt(3)
    assert prompt.count("-" * 64) == 1 and "Product 3: Select a wall mount" in prompt
    assert "Product 1:" not in prompt and "Product 2:" not in prompt  # no history restated
    env.env.act("search[mountix articulating]")
    chunks = env.chunks(3, "")
    assert chunks[0].startswith("Step 1:\nUser Instruction: WebShop [SEP] Instruction:")
    assert "\nAgent Action: search[mountix articulating]\nEnv Observation: " in chunks[0]
    assert chunks[0].endswith("Done: False")


@pytest.fixture(scope="module")
def travel() -> TravelEnv:
    return TravelEnv(TravelDB(FIXTURES / "travel_db"))


def _tool(env: TravelEnv, name: str, **args: str) -> str:
    tool = next(t for t in env.tools() if t.name == name)
    return tool.call(args).output


def test_travel_tools(travel: TravelEnv) -> None:
    restaurants = _tool(travel, "RestaurantSearch", city="Rockford")
    assert "Nutri Punch" in restaurants and "Average Cost" in restaurants
    assert (
        _tool(travel, "RestaurantSearch", city="Atlantis") == "There is no restaurant in this city."
    )
    stays = _tool(travel, "AccommodationSearch", city="Rockford")
    assert "Park Side Zen Home" in stays
    assert "Lower East Dream Room" not in stays  # no house_rules: dropped by dropna()
    assert (
        _tool(travel, "AccommodationSearch", city="Atlantis")
        == "There is no attraction in this city."
    )
    drive = _tool(
        travel, "DistanceMatrix", origin="Chicago", destination="Rockford", mode="driving"
    )
    assert drive.splitlines() == [
        "origin: Chicago", "destination: Rockford", "cost: 7",
        "duration: 1 hour 32 mins", "distance: 143 km",
    ]  # fmt: skip
    taxi = _tool(
        travel, "DistanceMatrix", origin="Chicago(IL)", destination="Rockford", mode="taxi"
    )
    assert "cost: 143" in taxi and "origin: Chicago" in taxi
    nowhere = _tool(travel, "DistanceMatrix", origin="Chicago", destination="Atlantis", mode="taxi")
    assert "cost: None" in nowhere and "distance: None" in nowhere
    assert "Rockford" in _tool(travel, "CitySearch", state="Illinois")
    assert _tool(travel, "CitySearch", state="Atlantis") == "Invalid State"
    flights = _tool(
        travel, "FlightSearch", origin="Chicago", destination="Rockford", date="2022-03-16"
    )
    assert flights == "Error executing FlightSearch: flights database not installed"
    assert [c.name for c in travel.calls][-1] == "FlightSearch"


def test_formal_prompt_and_chunks_leave_the_background_out() -> None:
    task = ArenaData(FIXTURES).tasks("formal_reasoning_math")[1]
    env = FormalTask(task, lambda: None, Judge())  # type: ignore[arg-type, return-value]
    background = task.row["backgrounds"][0]
    first = env.prompt(1)
    assert first.startswith(f"### BACKGROUND:\n{background}\n### PROBLEM:\n")
    assert env.prompt(3).startswith("### BACKGROUND:\nNo information provided.\n")
    assert env.base_chunks() == ["Initial result: Empty\n"]
    chunk = env.chunks(1, "$5$")[0]
    assert chunk == f"## Task: {task.questions[0]}\n## solution: $5$\n"
    assert background not in chunk


def test_long_context_keeps_the_last_tokens_and_stamps_chunks() -> None:
    clock = lambda: datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)  # noqa: E731
    memory = LongContext(max_tokens=40, clock=clock)
    memory.add("alpha")
    assert memory.context("q") == "[2026-01-02 03:04:05] alpha"
    memory.add("omega " * 60)
    kept = memory.context("q")
    assert "alpha" not in kept and kept.rstrip().endswith("omega")
    assert len(encoder().encode(memory.buffer)) <= 40


def test_bm25_memory_top_3_in_score_order_ties_by_insertion() -> None:
    memory = BM25Memory()
    for chunk in ["red apple", "green pear", "red cherry", "blue sky", "red apple pie"]:
        memory.add(chunk)
    got = memory.context("red apple")
    assert got.count("<memory>") == 3
    assert got.splitlines()[0] == "<memory>red apple</memory>"
    assert "red apple pie" in got and "red cherry" in got
    memory.docs = ["one", "two", "three", "four"]
    assert memory.context("zzz").splitlines() == [
        "<memory>one</memory>",
        "<memory>two</memory>",
        "<memory>three</memory>",
    ]


def test_wrap_and_none() -> None:
    assert (
        wrap(NoMemory().context("q"), "hi") == "<memory_context>\nNone\n</memory_context>\nUser: hi"
    )


def test_data_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no bundled_shopping/data.jsonl"):
        ArenaData(tmp_path).tasks("bundled_shopping")
    (tmp_path / "formal_reasoning_phys.jsonl").write_text('{"id": 1, "questions": ["a"]}\n')
    with pytest.raises(UsageError, match="formal_reasoning_phys.jsonl:1: not a MemoryArena row"):
        ArenaData(tmp_path).tasks("formal_reasoning_phys")
    (tmp_path / "formal_reasoning_phys.jsonl").write_text(
        json.dumps({"id": 4, "questions": ["a"], "answers": ["b"]}) + "\n"
    )
    tasks = ArenaData(tmp_path).tasks("formal_reasoning_phys")  # the flat layout, no key
    assert [t.id for t in tasks] == ["4"] and tasks[0].facts is None
    with pytest.raises(UsageError, match="unknown config"):
        ArenaData(tmp_path).tasks("progressive_search")


def test_fixtures_have_the_official_keys_and_deep_dependencies() -> None:
    data = ArenaData(FIXTURES)
    keys = {
        "bundled_shopping": {"id", "category", "questions", "answers"},
        "group_travel_planner": {"id", "base_person", "questions", "answers"},
        "formal_reasoning_math": {"id", "paper_name", "backgrounds", "questions", "answers"},
        "formal_reasoning_phys": {"id", "paper_name", "backgrounds", "questions", "answers"},
    }
    for config, wanted in keys.items():
        for task in data.tasks(config):
            assert set(task.row) == wanted
            assert task.facts is not None
    shop = data.tasks("bundled_shopping")[0]
    assert shop.facts is not None and shop.facts[6][0].source == 2  # depth 4
    travel = data.tasks("group_travel_planner")[0]
    assert travel.facts is not None and [f.source for f in travel.facts[4]] == [0, 3]


def test_tau_and_arena_share_one_strategy_seam() -> None:
    from flowstate_bench import seam
    from flowstate_bench.tau import strategies

    for name in ("Strategy", "TurnResult", "FlowStateStrategy", "policy_part", "LoopAction"):
        assert getattr(strategies, name) is getattr(seam, name)
