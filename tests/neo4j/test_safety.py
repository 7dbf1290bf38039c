"""Deployment controls end to end: redaction, read-only namespaces, retention, guarded actions."""

from __future__ import annotations

from datetime import timedelta

import pytest

from flowstate import FlowState, ReadOnlyError, Tool
from flowstate.engine.step import Approval
from flowstate.models import Category
from flowstate.models.records import utcnow
from flowstate.safety.redaction import builtin_redactor
from flowstate.safety.retention import RetentionPolicy
from flowstate.store import Repository, Store
from tests.neo4j.conftest import Factory, Raw
from tests.neo4j.engine_helpers import Harness, Shell, add, final, step, tool, user_prompt

pytestmark = pytest.mark.neo4j

CARD, EMAIL = "4111 1111 1111 1111", "ana.silva@example.org"


def test_redaction_masks_what_is_persisted_draft_included(
    shell: Shell, store: Store, namespace: str, repo: Repository, raw: Raw
) -> None:
    drafts: list[str] = []

    def lookup_customer(name: str) -> dict:
        """Customer record by name."""
        drafts.append(
            repo.open_requests()[0].payload
        )  # the write-ahead draft saved before this call
        return {"name": name, "email": EMAIL, "card": CARD}

    h = Harness(store, namespace, shell)
    model_script = [
        step(
            [add("payment", "constraint", "Pays by card", f"Card {CARD}, receipts to {EMAIL}")],
            action=tool("lookup_customer", name="Ana"),
        ),
        step(
            [add("customer", "environment", "Customer found", "see evidence", evidence=["r1.o1"])],
            action=final(f"Charged {CARD}"),
        ),
    ]
    agent, model = h.agent(model_script, tools=[lookup_customer])
    agent.redact = builtin_redactor()
    agent.run(f"My card is {CARD} and my mail {EMAIL}")
    assert CARD not in drafts[0] and EMAIL not in drafts[0]
    assert "[card ****1111]" in drafts[0]
    assert CARD in user_prompt(model, 1)  # the live Active State is the model's own view
    [bundle] = repo.bundles()
    stored = bundle.model_dump_json()
    assert CARD not in stored and EMAIL not in stored
    assert bundle.states[0].content == "Card [card ****1111], receipts to [email]"
    assert bundle.request.text == "My card is [card ****1111] and my mail [email]"
    assert '"card": "[card ****1111]"' in bundle.observations[0].output
    # Checked here rather than in Cypher: toString() refuses list properties, and the planner may
    # test a predicate on nodes of other namespaces before the namespace filter.
    persisted = raw.rows("MATCH (n {namespace: $ns}) RETURN properties(n) AS p", ns=namespace)
    assert persisted and not [row for row in persisted if CARD in str(row) or EMAIL in str(row)]


def test_a_read_only_namespace_can_be_read_but_not_written(
    shell: Shell, store: Store, namespace: str, repo: Repository
) -> None:
    Harness(store, namespace).run([step([add("fact")], action=final())])
    counts = repo.counts()
    ro = FlowState(store, namespace, read_only=True)
    assert "r1.fact" in ro.index().text
    assert ro.reveal(["r1.fact"])[0].state.content.startswith("content of fact")
    agent, model = Harness(store, namespace, shell, read_only=True).agent([final()])
    with pytest.raises(ReadOnlyError):
        agent.run("write something")
    with pytest.raises(ReadOnlyError):
        ro.repository.forget_namespace(force=True)
    assert repo.counts() == counts and model.calls == []


def test_retention_expires_old_kinds_and_keeps_the_rest(
    store: Store, namespace: str, repo: Repository, make: Factory
) -> None:
    old, new = utcnow() - timedelta(days=40), utcnow()
    rid = "r1"
    states = [
        make.state(rid, "likes_tea", Category.PREFERENCE, created_at=old, updated_at=old),
        make.state(rid, "room_rate", Category.ENVIRONMENT, created_at=old, updated_at=old),
        make.state(rid, "fresh_rate", Category.ENVIRONMENT, created_at=new, updated_at=new),
    ]
    obs = [make.observation(rid, 1, created_at=old), make.observation(rid, 2, created_at=new)]
    repo.commit(
        make.bundle(
            1,
            states=states,
            observations=obs,
            evidence=[("r1.room_rate", "r1.o1"), ("r1.fresh_rate", "r1.o2")],
        )
    )
    policy = RetentionPolicy.parse('{"observation": 30, "environment": 30, "preference": null}')
    fs = FlowState(store, namespace)
    counts = fs.apply_retention(policy)
    assert counts["observation"]["nodes"] == 1 and counts["environment"]["nodes"] == 1
    assert "preference" not in counts
    [bundle] = repo.bundles()
    assert sorted(s.key for s in bundle.states) == ["fresh_rate", "likes_tea"]
    assert [o.id for o in bundle.observations] == ["r1.o2"]
    nothing = {"nodes": 0, "relationships": 0, "superseded": {}, "dependents": {}}
    assert fs.apply_retention(policy) == {"observation": nothing, "environment": nothing}


def test_guarded_calls_are_recorded_with_their_cited_states(
    shell: Shell, store: Store, namespace: str, repo: Repository
) -> None:
    booked: list[str] = []

    def pay(amount: int) -> str:
        """Pay an amount (consequential)."""
        booked.append(str(amount))
        return "paid"

    h = Harness(store, namespace, shell)
    h.run([step([add("price", "environment", "Price 100", "100 EUR")], action=final())])
    h.run(
        [
            step(
                [
                    add(
                        "price",
                        "environment",
                        "Price 90",
                        "Now 90 EUR",
                        relations=[{"type": "SUPERSEDES", "target": "r1.price"}],
                    )
                ],
                action=final(),
            )
        ]
    )
    decisions: list[Approval] = []
    agent, model = h.agent(
        [
            step(access=["r1.price", "r2.price"]),
            step(action={**tool("pay", amount=100), "cites": ["r1.price"]}),  # stale
            step(action={**tool("pay", amount=90), "cites": ["r2.price"]}),
            step(action=final("paid 90")),
        ],
        tools=[Tool.from_function(pay, consequential=True)],
    )

    def approve(asked: Approval) -> bool:
        decisions.append(asked)
        return True

    agent.approve = approve
    agent.run("pay the current price")
    assert "pay: cited states are stale: r1.price (SUPERSEDED by r2.price)" in user_prompt(model, 2)
    assert booked == ["90"]
    recorded = repo.decisions("r3")
    assert [(d.approved, d.cites) for d in recorded] == [
        (False, ["r1.price"]),
        (True, ["r2.price"]),
    ]
    assert recorded[0].reason.startswith("pay: cited states are stale")
    assert [d.cites for d in decisions] == [["r2.price"]]
