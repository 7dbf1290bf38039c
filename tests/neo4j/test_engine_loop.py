"""The execution loop against a real Neo4j, driven by scripted models through litellm."""

from __future__ import annotations

import pytest

from flowstate import Approval, Outcome, ScriptedModel, Tool
from flowstate.store import Repository, Store
from tests.neo4j.engine_helpers import Harness, Shell, add, final, section, step, tool, user_prompt

pytestmark = pytest.mark.neo4j


@pytest.fixture
def h(store: Store, namespace: str, repo: Repository, shell: Shell) -> Harness:
    return Harness(store, namespace, shell)


def _seed(h: Harness) -> None:
    """r1 with a budget, a city that the budget depends on, and a hotel choice."""
    result, _ = h.run(
        [
            step(
                [
                    add(
                        "city",
                        "constraint",
                        "Trip is to Lisbon",
                        "Destination: Lisbon, 3 nights from 12 June, near Baixa",
                    ),
                    add(
                        "budget",
                        "constraint",
                        "Budget 900 EUR",
                        "Total budget 900 EUR for 2, flights and hotel included",
                        relations=[{"type": "DEPENDS_ON", "target": "city"}],
                    ),
                ],
                action=final("noted", "Plan a Lisbon trip"),
            ),
        ]
    )
    assert result.outcome is Outcome.ANSWERED and result.states_added == ["r1.city", "r1.budget"]


REJECTIONS = [
    (
        [add("Bad Key")],
        "delta rejected, nothing applied: delta[1] add Bad Key: key must be snake_case",
    ),
    (
        [{"op": "update", "key": "r1.budget", "summary": "Budget 1200 EUR"}],
        "delta rejected, nothing applied: delta[1] update r1.budget: r1.budget belongs to past "
        "request r1; past states are never changed. Add a new state with a SUPERSEDES relation "
        "to it instead",
    ),
    (
        [{"op": "remove", "key": "r1.city"}],
        "delta rejected, nothing applied: delta[1] remove r1.city: r1.city belongs to past "
        "request r1",
    ),
    (
        [add("x", relations=[{"type": "DEPENDS_ON", "target": "r9.ghost"}])],
        "delta rejected, nothing applied: delta[1] add x: relation target 'r9.ghost' is not "
        "visible",
    ),
    (
        [add("x", evidence=["r1.o1"])],
        "delta rejected, nothing applied: delta[1] add x: evidence 'r1.o1' is not an "
        "observation of this request",
    ),
    (
        [add("x", summary="two\nlines")],
        "delta rejected, nothing applied: delta[1] add x: summary must be one line",
    ),
]


@pytest.mark.parametrize(("bad", "told"), REJECTIONS, ids=[r[1][41:70] for r in REJECTIONS])
def test_a_bad_operation_rejects_the_whole_delta_and_is_explained(
    h: Harness, bad: list[dict], told: str
) -> None:
    _seed(h)
    result, model = h.run(
        [
            step([add("good_one"), *bad]),
            step(action=final("ok")),
        ]
    )
    second = user_prompt(model, 1)
    assert told in second
    assert section(second, "States of this request (r2)") == "(none)"  # the good op was not applied
    assert result.states_added == []
    assert result.rejections >= 1
    assert h.fs.repository.history()[-1].id == "r2"


def test_final_answer_waits_for_a_valid_delta(h: Harness) -> None:
    result, model = h.run(
        [
            step([add("BAD")], action=final("too early")),
            step([add("fixed")], action=final("now")),
        ]
    )
    assert "final answer held back" in user_prompt(model, 1)
    assert result.answer == "now" and result.states_added == ["r1.fixed"]


def test_access_defers_and_content_arrives_at_the_next_call(h: Harness) -> None:
    _seed(h)
    result, model = h.run(
        [
            step(access=["r1.budget"]),  # defer: no action
            step(access=["r1.city"]),  # the relation's far end, opened on request
            step(action=final("900 EUR in Lisbon")),
        ]
    )
    first, second, third = (user_prompt(model, i) for i in range(3))
    assert "Total budget 900 EUR" not in first
    revealed = section(second, "Revealed past states")
    assert "Total budget 900 EUR for 2" in revealed
    assert "DEPENDS_ON -> r1.city" in revealed
    assert "Destination: Lisbon" not in second  # the target stays closed until accessed
    assert "Destination: Lisbon, 3 nights" in section(third, "Revealed past states")
    assert result.revealed == ["r1.budget", "r1.city"]
    assert "step 1: no action (deferred)" in second


def test_access_outside_what_was_shown_is_refused(h: Harness) -> None:
    _seed(h)
    result, model = h.run(
        [
            step(access=["r7.secret"]),
            step(access=["r1.budget", "r1.city", "r1.x"]),
            step(action=final()),
        ],
        limits={"max_access_per_step": 2},
    )
    assert (
        "access r7.secret: unknown id: only ids shown in the index, by a search or in revealed "
        "relations can be accessed"
    ) in user_prompt(model, 1)
    assert "access: 3 ids; at most 2 per step" in user_prompt(model, 2)
    assert result.revealed == []


def test_supersede_marks_the_index_and_the_revealed_state(h: Harness) -> None:
    _seed(h)
    agent, model = h.agent(
        [
            step(
                [
                    add(
                        "budget",
                        "constraint",
                        "Budget 1200 EUR",
                        "Raised to 1200 EUR",
                        relations=[{"type": "SUPERSEDES", "target": "r1.budget"}],
                    )
                ],
                action=final("raised"),
            ),
        ]
    )
    agent.run("Raise the budget to 1200")
    incremental = agent.index.render().text
    assert "r1.budget [constraint] Budget 900 EUR  (SUPERSEDED by r2.budget)" in incremental
    assert incremental == h.fs.index().text  # the incremental update equals a full rebuild
    [revealed] = h.fs.reveal(["r1.budget"])
    assert revealed.superseded_by == ["r2.budget"]
    result, model = h.run([step(access=["r1.budget"]), step(action=final())])
    assert "(SUPERSEDED by r2.budget: stale, do not rely on it)" in user_prompt(model, 1)


def test_committed_graph_is_exactly_what_the_request_made(h: Harness, repo: Repository) -> None:
    def find_hotels(city: str) -> list[dict]:
        """Hotels in a city."""
        return [{"name": "Casa Azul", "price": 120}]

    def weather(city: str) -> str:
        """Weather in a city."""
        return "sunny"

    result, _ = h.run(
        [
            step([add("city", "constraint")], action=tool("find_hotels", city="Lisbon")),
            step(action=tool("weather", city="Lisbon")),
            step(
                [
                    add(
                        "hotel",
                        "decision",
                        "Pick Casa Azul",
                        "Casa Azul, 120 EUR",
                        relations=[{"type": "DEPENDS_ON", "target": "city"}],
                        evidence=["r1.o1"],
                    ),
                    add("scratch"),
                    {"op": "update", "key": "city", "summary": "Lisbon it is"},
                    {"op": "remove", "key": "scratch"},
                ],
                action=final("Casa Azul", "Hotel for Lisbon"),
            ),
        ],
        tools=[find_hotels, weather],
    )
    [bundle] = repo.bundles()
    assert [s.id for s in bundle.states] == ["r1.city", "r1.hotel"]
    assert bundle.states[0].summary == "Lisbon it is"
    assert [(r.type.value, r.source, r.target) for r in bundle.relations] == [
        ("DEPENDS_ON", "r1.hotel", "r1.city")
    ]
    assert [o.id for o in bundle.observations] == ["r1.o1"]  # r1.o2 was never cited: dropped
    assert bundle.observations[0].output == '[{"name": "Casa Azul", "price": 120}]'
    assert bundle.request.summary == "Hotel for Lisbon" and bundle.request.steps == 3
    assert repo.open_requests() == []
    assert result.states_added == ["r1.city", "r1.hotel"]


def test_token_usage_is_recorded_per_call_and_per_request(h: Harness, repo: Repository) -> None:
    result, _ = h.run([step([add("a")]), step(action=final("x"))])
    assert len(result.calls) == 2 and all(c.prompt_tokens > 100 for c in result.calls)
    assert all(c.completion_tokens > 0 for c in result.calls)
    stored = repo.get_request(result.request_id).usage
    assert stored.prompt_tokens == sum(c.prompt_tokens for c in result.calls)
    assert stored.completion_tokens == sum(c.completion_tokens for c in result.calls)
    assert stored.calls == 2


def test_malformed_output_is_reported_then_fails_clearly(h: Harness, repo: Repository) -> None:
    result, model = h.run(["no json here", '{"delta": 5}', "```json\n{oops}\n```"], max_malformed=3)
    assert "your output could not be used" in user_prompt(model, 1)
    assert result.outcome is Outcome.FAILED
    assert "unusable output 3 times in a row" in (result.error or "")
    assert repo.get_request(result.request_id).outcome is Outcome.FAILED


def test_lines_after_final_are_stored_not_swallowed_into_the_answer(
    h: Harness, repo: Repository
) -> None:
    reply = 'FINAL Noted.\nADD name preference "User is Ana" "Ana"\nSUMMARY Name noted'
    result, _ = h.run([reply], text="I am Ana")
    assert (result.outcome, result.answer) == (Outcome.ANSWERED, "Noted.")
    assert result.states_added == ["r1.name"]
    stored = repo.get_request(result.request_id)
    assert (stored.answer, stored.summary) == ("Noted.", "Name noted")
    assert "r1.name [preference] User is Ana" in h.fs.index().text


def test_keyword_lines_in_the_answers_code_block_stay_text(h: Harness, repo: Repository) -> None:
    """A code block of the answer, however its fences are written, never acts on the
    request: the state it names stays, the answer keeps the block."""
    answer = "To drop it write:\r\n```\r\nREMOVE real\r\n```"
    result, _ = h.run([step([add("real")]), "FINAL " + answer + "\r\n"])
    assert result.answer == answer and result.states_added == ["r1.real"]
    assert [s.id for s in repo.bundles()[0].states] == ["r1.real"]


def test_a_tool_after_final_is_told_as_a_second_action(h: Harness, repo: Repository) -> None:
    result, model = h.run(["FINAL see below\nTOOL search {}", step(action=final("ok"))])
    assert "line 2 (TOOL): one action per step (a TOOL or a FINAL), not two" in user_prompt(
        model, 1
    )
    assert repo.get_request(result.request_id).answer == "ok"


def test_step_limit_ends_the_request_and_keeps_its_states(h: Harness, repo: Repository) -> None:
    result, _ = h.run([step([add("a")]), step(), step()], max_steps=3)
    assert result.outcome is Outcome.STEP_LIMIT
    assert "within 3 steps" in (result.error or "")
    assert [s.id for s in repo.bundles()[0].states] == ["r1.a"]


def test_a_failing_tool_becomes_an_observation(h: Harness) -> None:
    def explode(n: int) -> int:
        """Always fails."""
        raise RuntimeError(f"boom {n}")

    result, model = h.run(
        [
            step(action=tool("explode", n=3)),
            step(action=tool("explode", n="x")),
            step(action=tool("nope")),
            step(action=final()),
        ],
        tools=[explode],
    )
    assert 'r1.o1 explode({"n": 3}) [error]\n  output: RuntimeError: boom 3' in user_prompt(
        model, 1
    )
    assert "invalid arguments for explode: n: Input should be a valid integer" in user_prompt(
        model, 2
    )
    assert "unknown tool 'nope'; tools: explode" in user_prompt(model, 3)
    assert result.outcome is Outcome.ANSWERED


def test_index_budget_collapses_the_oldest_and_a_collapsed_request_opens(h: Harness) -> None:
    for n in range(1, 6):
        h.run(
            [
                step(
                    [
                        add(f"fact_{k}", summary=f"fact {k} of request {n} " + "x" * 40)
                        for k in range(4)
                    ],
                    action=final(summary=f"request {n}"),
                )
            ]
        )
    agent, model = h.agent(
        [step(access=["r1"]), step(access=["r1.fact_2"]), step(action=final())],
        index_budget_tokens=200,
    )
    agent.refresh_index()  # as the request's start loads it
    rendered = agent.index.render()
    assert "r1" in rendered.collapsed and "r5" not in rendered.collapsed
    assert rendered.tokens <= 200
    assert "r1: request 1  [4 states; collapsed: access r1]" in rendered.text
    agent.run("what was in r1?")
    assert "r1.fact_2 [environment] fact 2 of request 1" in section(
        user_prompt(model, 1), "Opened requests"
    )
    assert "content of fact_2" in section(user_prompt(model, 2), "Revealed past states")


def test_consequential_tools_need_cites_and_approval(h: Harness) -> None:
    booked: list[str] = []

    def book(hotel: str) -> str:
        """Book a hotel (spends money)."""
        booked.append(hotel)
        return "booked"

    guarded = Tool.from_function(book, consequential=True)
    decisions: list[Approval] = []

    def approver(asked: Approval) -> bool:
        decisions.append(asked)
        return asked.arguments["hotel"] == "Casa Azul"

    model = ScriptedModel.sequence(
        f"{h.namespace}-guard",
        [
            step([add("choice", "decision")], action={**tool("book", hotel="Casa Azul")}),
            step(action={**tool("book", hotel="Other"), "cites": ["r1.choice"]}),
            step(action={**tool("book", hotel="Casa Azul"), "cites": ["r1.choice"]}),
            step(action=final()),
        ],
    )
    agent = h.wrap(model.client(), tools=[guarded], approve=approver)
    agent.run("book it")
    assert "book is consequential: cite the states it relies on" in user_prompt(model, 1)
    assert "book was denied by the approver" in user_prompt(model, 2)
    assert booked == ["Casa Azul"]
    assert [d.cites for d in decisions] == [["r1.choice"], ["r1.choice"]]


def test_on_step_reports_every_step_the_final_one_included(h: Harness) -> None:
    agent, _ = h.agent([step([add("a")]), step(), step([add("b")], action=final())])
    seen: list[tuple[int, list[str], bool]] = []

    def record(active) -> None:  # noqa: ANN001
        seen.append((active.step, sorted(active.states), h.fs.repository.open_requests() == []))

    agent.on_step = record
    agent.run("three steps")
    # the last call comes after the commit: its states are in and no draft is left
    assert seen == [(1, ["a"], False), (2, ["a"], False), (3, ["a", "b"], True)]
