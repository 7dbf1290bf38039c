"""The engine at its edges, end to end on Neo4j: a guard that sees this request's
supersessions, hostile tools and replies that the request survives, async tools, and the
small breaks (a lone surrogate in the request, a ScriptedModel passed as the model, a shown
superseding id that must open, rejections that quote hostile input)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from flowstate import (
    Outcome,
    RequestInterrupted,
    ScriptedModel,
    Tool,
    UsageError,
)
from flowstate.engine.report import MAX_TOLD_CHARS
from flowstate.llm.scripted import ScriptedFailure
from flowstate.store import Repository, Store
from flowstate_bench.fault_edges import HOSTILE_CALLS, hostile_tool_set
from tests.neo4j.engine_helpers import (
    Harness,
    Shell,
    add,
    final,
    section,
    step,
    tool,
    user_prompt,
)
from tests.neo4j.wire import DRAFT_SAVES, Wire

pytestmark = pytest.mark.neo4j


@pytest.fixture
def h(store: Store, namespace: str, repo: Repository) -> Harness:
    return Harness(store, namespace)


def _payments() -> tuple[list[int], Tool]:
    paid: list[int] = []

    def pay(amount: int) -> str:
        """Pay."""
        paid.append(amount)
        return f"paid {amount}"

    return paid, Tool.from_function(pay, consequential=True)


def test_a_state_superseded_earlier_in_the_request_cannot_back_a_payment(
    h: Harness, repo: Repository
) -> None:
    h.run([step([add("budget", "constraint", "Budget 900 EUR")], action=final())])
    paid, pay = _payments()
    supersede = add(
        "budget", "constraint", "Budget now 600 EUR", relations=[{"type": "SUPERSEDES",
                                                                  "target": "r1.budget"}]
    )  # fmt: skip
    agent, model = h.agent(
        [
            step(access=["r1.budget"]),
            step([supersede], action={**tool("pay", amount=900), "cites": ["r1.budget"]}),
            step(action={**tool("pay", amount=600), "cites": ["r2.budget"]}),
            step(action=final("paid 600")),
        ],
        tools=[pay],
    )
    agent.approve = lambda _asked: True
    result = agent.run("pay the hotel")
    assert paid == [600] and result.answer == "paid 600"
    assert "pay: cited states are stale: r1.budget (SUPERSEDED by r2.budget)" in user_prompt(
        model, 2
    )
    decisions = repo.decisions("r2")
    assert [(d.approved, d.cites) for d in decisions] == [
        (False, ["r1.budget"]),
        (True, ["r2.budget"]),
    ]


def test_an_approver_that_raises_is_a_recorded_denial(h: Harness, repo: Repository) -> None:
    paid, pay = _payments()

    def approver(_asked: object) -> bool:
        raise ConnectionError("approval service unreachable")

    agent, model = h.agent(
        [
            step([add("plan")], action={**tool("pay", amount=5), "cites": ["r1.plan"]}),
            step(action=final("could not pay")),
        ],
        tools=[pay],
    )
    agent.approve = approver
    result = agent.run("pay")
    assert paid == [] and result.outcome is Outcome.ANSWERED
    [decision] = repo.decisions("r1")
    assert not decision.approved
    assert decision.reason == (
        "pay: the approver failed (ConnectionError: approval service unreachable); denied"
    )
    assert decision.reason in user_prompt(model, 1)


def _hostile_run(h: Harness):  # noqa: ANN202
    run_async = h.shell.is_async
    calls = [*HOSTILE_CALLS, *([tool("later", city="Porto")] if run_async else [])]
    # every observation is cited, so the commit keeps them all
    script: list[dict[str, Any] | ScriptedFailure] = [step(action=calls[0])]
    script += [step([add(f"s{i}", evidence=[f"r1.o{i}"])], action=c) for i, c in
               enumerate(calls[1:], 1)]  # fmt: skip
    script += [step([add("last", evidence=[f"r1.o{len(calls)}"])]), ScriptedFailure(400, "gone")]
    tools = [t for t in hostile_tool_set() if run_async or not t.is_async]
    agent, model = h.agent(script, tools=tools)
    with pytest.raises(
        RequestInterrupted
    ):  # the model fails after the hostile calls: a draft is left
        agent.run("hostile")
    return agent, model, len(calls)


def test_hostile_tool_results_become_bounded_observations_and_resume_is_honest(
    shell: Shell, repo: Repository, store: Store
) -> None:
    h = Harness(store, repo.namespace, shell)
    _, model, n = _hostile_run(h)
    prompts = [c.messages[-1]["content"] for c in model.calls if c.reply is not None]
    assert all(len(p) < 60_000 for p in prompts)  # nothing hostile is shown in full
    assert "caf\\udce9 \\udcff\\udcfe" in prompts[1]
    assert "(15,000 characters): Extra inputs are not permitted" in prompts[3]
    assert "nested deeper than 64 levels: not shown" in prompts[4]
    fresh, fresh_model = Harness(store, repo.namespace).agent([step(action=final("ok"))])
    result = fresh.resume()  # from the draft, as another process would
    assert "was interrupted" not in user_prompt(fresh_model, 0)
    assert result.outcome is Outcome.ANSWERED
    [bundle] = repo.bundles()
    assert len(bundle.observations) == n
    for obs in bundle.observations:
        obs.output.encode("utf-8")
        assert len(obs.output) < 21_000
    outputs = {o.tool: o.output for o in bundle.observations}
    assert outputs["surrogate"] == "caf\\udce9 \\udcff\\udcfe"
    assert outputs["huge"].endswith("[truncated: 300,000 characters in all]")
    assert outputs["loud"].startswith("ValueError: eee")
    assert outputs["loud"].endswith("[truncated: 250,012 characters in all]")
    if shell.is_async:
        assert outputs["later"] == "Porto \\udcff later"


def test_run_refuses_async_tools_before_writing(h: Harness, repo: Repository) -> None:
    agent, model = h.agent([step(action=final())], tools=hostile_tool_set())
    with pytest.raises(UsageError, match=r"later are async \(async def\): use `await agent.arun"):
        agent.run("go")
    assert model.calls == [] and repo.counts().nodes == 0


@pytest.mark.parametrize("text", ["caf\udce9", "\ud800", "ok \udfff end"])
def test_a_lone_surrogate_in_the_request_is_a_usage_error(
    h: Harness, repo: Repository, text: str
) -> None:
    agent, model = h.agent([step(action=final())])
    with pytest.raises(UsageError, match="lone surrogate"):
        agent.run(text)
    assert model.calls == [] and repo.counts().nodes == 0


def test_a_scripted_model_object_works_as_the_model(h: Harness, repo: Repository) -> None:
    model = ScriptedModel.sequence(f"{repo.namespace}-obj", [step([add("a")], action=final())])
    result = h.fs.agent(model).run("go")  # as the README shows it
    assert result.outcome is Outcome.ANSWERED and repo.history()[0].id == "r1"


@pytest.mark.parametrize("model", [42, object(), None])
def test_a_model_that_is_no_client_fails_before_anything_is_written(
    h: Harness, repo: Repository, model: object
) -> None:
    with pytest.raises(UsageError, match="model must be a litellm model name"):
        h.fs.agent(model)  # type: ignore[arg-type]
    assert repo.counts().nodes == 0


def test_the_id_shown_as_superseding_can_be_opened(h: Harness) -> None:
    h.run([step([add("budget", "constraint")], action=final())])
    newer = add("budget", "constraint", relations=[{"type": "SUPERSEDES", "target": "r1.budget"}])
    long = [add(f"fact{i}", summary=f"a long summary of fact {i} " * 3) for i in range(8)]
    h.run([step(access=["r1.budget"]), step([newer, *long], action=final())])
    # a budget this small collapses both requests: r2.budget is shown only as the superseder
    agent, model = h.agent(
        [step(access=["r1"]), step(access=["r2.budget"]), step(action=final())],
        index_budget_tokens=50,
    )
    result = agent.run("what is the budget?")
    assert "[9 states; collapsed: access r2]" in user_prompt(model, 0)
    assert "r1.budget [constraint] summary of budget  (SUPERSEDED by r2.budget)" in section(
        user_prompt(model, 1), "Opened requests"
    )
    assert result.revealed == ["r2.budget"]
    assert "not_visible" not in user_prompt(model, 2) and "unknown id" not in user_prompt(model, 2)


def test_rejections_quoting_hostile_input_are_bounded(h: Harness) -> None:
    key = "K" * 100_000
    bad_ops = [add(f"{key}{i}", summary="s", content="c") for i in range(2)]
    agent, model = h.agent(
        [
            json.dumps({"delta": bad_ops, "action": tool(key)}),
            json.dumps({key: 1}),
            step(action=final()),
        ]
    )
    agent.run("hostile")
    for call in (1, 2):
        told = user_prompt(model, call).split("# Rejected at your previous step\n")[1]
        assert len(told) < 6 * (MAX_TOLD_CHARS + 100)
    told = user_prompt(model, 1)
    assert "characters cut] …" in told and "key must be snake_case" in told  # why is kept


@pytest.mark.parametrize("shell", ["async"], indirect=True)
def test_aresume_finishes_an_async_step_cut_before_its_tool_ran(
    wire: Wire, repo: Repository
) -> None:
    h = wire.harness(repo.namespace)
    runs: list[str] = []

    async def fetch(city: str) -> str:
        """An async lookup."""
        await asyncio.sleep(0)
        runs.append(city)
        return f"{city}: 3 hotels"

    agent, model = h.agent(
        [
            step([add("city")], action=tool("fetch", city="Porto")),
            step([add("hotels", evidence=["r1.o1"])], action=final("3 hotels")),
        ],
        tools=[fetch],
    )
    # 1: the request's start; 2: the write-ahead save before the call
    with pytest.raises(RequestInterrupted), wire.proxy.cut(DRAFT_SAVES, nth=2):
        agent.run("hotels in Porto")  # arun: the harness drives the async shell
    assert runs == []
    result = agent.resume()  # aresume
    assert runs == ["Porto"] and len(model.calls) == 2 and result.answer == "3 hotels"
    assert [o.output for o in repo.bundles()[0].observations] == ["Porto: 3 hotels"]
