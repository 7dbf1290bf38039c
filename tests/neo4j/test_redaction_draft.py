"""With the built-in redactor, nothing raw reaches Neo4j: the per-step draft's parked call,
action log, rejections (they echo input), decisions and observations, and how it ended. Read
back with a driver of our own, not through the code under test."""

from __future__ import annotations

import pytest

from flowstate import RequestInterrupted, Tool
from flowstate.safety.redaction import builtin_redactor
from flowstate.store import Repository
from tests.neo4j.conftest import Raw
from tests.neo4j.engine_helpers import add, final, step, tool
from tests.neo4j.wire import COMMIT, Wire

pytestmark = pytest.mark.neo4j

CARD = "4111 1111 1111 1111"
FORMS = (CARD, "4111111111111111", "4111-1111-1111-1111")
EMAIL = "ana.silva@example.org"


def _raw_draft(raw: Raw, namespace: str) -> str:
    [row] = raw.rows("MATCH (d:Draft {namespace: $ns}) RETURN d.payload AS p", ns=namespace)
    return row["p"]


def _leaks(raw: Raw, namespace: str) -> list[str]:
    """Every property of every node of the namespace that holds a raw card number or mail."""
    rows = raw.rows(
        "MATCH (n {namespace: $ns}) UNWIND keys(n) AS k WITH n, k, n[k] AS v "
        "WITH n, k, CASE WHEN valueType(v) STARTS WITH 'LIST' "
        "THEN reduce(t = '', x IN v | t + ' ' + toString(x)) ELSE toString(v) END AS v "
        "WHERE any(s IN $secrets WHERE v CONTAINS s) RETURN labels(n) AS l, k",
        ns=namespace,
        secrets=[*FORMS, EMAIL],
    )
    return [f"{r['l']}.{r['k']}" for r in rows]


def test_a_card_in_tool_call_arguments_never_reaches_the_draft(
    wire: Wire, namespace: str, repo: Repository, raw: Raw
) -> None:
    seen: list[str] = []

    def charge(card: str, email: str) -> str:
        """Charge a card."""
        return f"charged {card}, receipt to {email}"

    def policy(messages):  # noqa: ANN001, ANN202
        n = len(model.calls)
        if n == 0:
            return step(action={**tool("charge", card=CARD, email=EMAIL), "cites": ["r1.pay"]})
        if n == 1:  # a rejection that echoes the card: an unknown tool and a bad key
            return step([add(f"Card {CARD}")], action=tool(f"refund {FORMS[2]}", card=FORMS[1]))
        if n == 2:
            return step([add("pay", "constraint", "Pays by card", "see o1")])
        if n == 3:
            return step(action={**tool("charge", card=FORMS[2], email=EMAIL), "cites": ["r1.pay"]})
        return step(action=final(f"Charged {CARD}", f"charged {CARD}"))

    h = wire.harness(namespace)
    agent, model = h.agent(policy, tools=[Tool.from_function(charge, consequential=True)])
    agent.redact = builtin_redactor()
    agent.approve = lambda _asked: True

    real_save = agent.repo.ops.save_draft

    def save_and_read_back(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        yield from real_save(*args, **kwargs)
        seen.append(_raw_draft(raw, namespace))  # what landed in Neo4j

    agent.repo.ops.save_draft = save_and_read_back
    with pytest.raises(RequestInterrupted), wire.proxy.cut(COMMIT):
        agent.run(f"Charge my card {CARD} and mail {EMAIL}")
    # the start, after steps 1-3 (each saved while the next model call ran), the write-ahead
    # save before the call, after step 4, and the finish (how it ended, before the commit)
    assert len(seen) == 7
    seen = seen[1:]
    for payload in seen:
        assert not [s for s in (*FORMS, EMAIL) if s in payload], payload[:3000]
        assert "[card ****1111]" in payload
    assert "REFUSED" in seen[0] and "cited ids are not in the Active State" in seen[0]
    assert "unknown tool 'refund [card ****1111]'" in seen[1]
    assert "delta[0] add Card [card ****1111]" in seen[1]
    assert '"pending_call":{"type":"tool","name":"charge"' in seen[3]
    assert '"card":"[card ****1111]"' in seen[3]
    assert '"pending_call":null' in seen[4] and "charge({" in seen[4]
    assert '"answer":"Charged [card ****1111]"' in seen[5]  # the finish, kept for resume
    assert _leaks(raw, namespace) == []
    del agent.repo.ops.save_draft  # back to the real plan
    result = agent.resume()
    assert result.answer == f"Charged {CARD}"  # this process's own view, kept in memory
    assert repo.get_request("r1").answer == "Charged [card ****1111]"
    assert _leaks(raw, namespace) == []
    decisions = repo.decisions("r1")
    assert [d.approved for d in decisions] == [False, True]
    assert all("[card ****1111]" in d.arguments for d in decisions)
