"""Each refusal is of the kind its documentation promises, so a caller can act on it: an id
that is not open is NotFoundError (exit 2), never RequestHeld (which callers retry); a
one-call request that supersedes a state superseded first is a ConflictError; a bad
configuration value is a UsageError naming the field and its bounds."""

from __future__ import annotations

from typing import Any

import pytest

from flowstate import (
    AgentConfig,
    AsyncFlowState,
    ConflictError,
    FlowState,
    NotFoundError,
    RequestHeld,
    UsageError,
)
from flowstate.llm import ScriptedModel
from flowstate.store import Repository, Store
from tests.neo4j.engine_helpers import Shell

pytestmark = pytest.mark.neo4j


def fact(key: str, summary: str, supersedes: str | None = None) -> dict[str, Any]:
    relations = [{"type": "SUPERSEDES", "target": supersedes}] if supersedes else []
    return {
        "op": "add",
        "key": key,
        "category": "constraint",
        "summary": summary,
        "content": summary,
        "relations": relations,
    }


def test_resume_of_an_id_never_handed_out_is_not_found(store: Store, repo: Repository) -> None:
    fs = FlowState(store, repo.namespace)
    fs.remember([fact("travellers", "4 travellers")], "We are four")
    with pytest.raises(
        NotFoundError, match=r"r7 of .* it is not open \(no request has that id yet"
    ) as e:
        fs.resume("r7")
    assert not isinstance(e.value, RequestHeld)
    assert fs.pending() == [] and [r.id for r in fs.history()] == ["r1"]


def test_resume_of_a_discarded_request_is_not_found(store: Store, repo: Repository) -> None:
    fs = FlowState(store, repo.namespace)
    with fs.begin("Plan a trip") as session:
        rid = session.request_id
    fs.discard(rid)
    with pytest.raises(
        NotFoundError, match=f"{rid} of .* it is not open \\(it was committed or discarded"
    ):
        fs.resume(rid)


def test_async_resume_of_an_unknown_id_is_not_found(async_shell: Shell, repo: Repository) -> None:
    assert async_shell.store is not None
    fs = AsyncFlowState(async_shell.store, repo.namespace)
    with pytest.raises(NotFoundError, match="r3 of .* it is not open"):
        async_shell.wait(fs.resume("r3"))


def test_a_request_held_by_a_live_writer_is_still_request_held(
    store: Store, repo: Repository
) -> None:
    fs = FlowState(store, repo.namespace)
    session = fs.begin("Plan a trip")  # held by this process, renewed in the background
    other = FlowState(store, repo.namespace)
    try:
        with pytest.raises(RequestHeld, match="holds it"):
            other.agent(ScriptedModel.sequence(f"held-{repo.namespace}", [])).resume(
                session.request_id
            )
    finally:
        session.__exit__(None, None, None)


def test_cli_resume_of_an_unknown_id_exits_2(cli, repo: Repository) -> None:  # noqa: ANN001
    ScriptedModel.sequence(f"resume-{repo.namespace}", [])
    model = f"flowstate-scripted/resume-{repo.namespace}"
    done = cli("resume", "r5", "-N", repo.namespace, "-m", model)
    assert done.exit_code == 2, done.output
    assert done.stderr.startswith("Error: ") and "r5" in done.stderr
    assert "is not open" in done.stderr


def test_remember_superseding_a_state_superseded_first_is_a_conflict(
    store: Store, repo: Repository
) -> None:
    fs = FlowState(store, repo.namespace)
    fs.remember([fact("travellers", "4 travellers")], "We are four")
    fs.remember([fact("travellers", "5 travellers", "r1.travellers")], "Ben joins")
    with pytest.raises(ConflictError, match="already superseded by r2.travellers") as refused:
        fs.remember([fact("travellers", "6 travellers", "r1.travellers")], "Cy joins")
    assert refused.value.conflicts == [("r1.travellers", "r2.travellers")]
    assert [r.id for r in fs.history()] == ["r1", "r2"]  # nothing of it was written
    # Any other refusal of a one-call request stays a plain UsageError.
    with pytest.raises(UsageError) as other:
        fs.remember([fact("travellers", "7 travellers", "r9.nobody")], "Dan joins")
    assert not isinstance(other.value, ConflictError)


@pytest.mark.parametrize(
    ("values", "said"),
    [
        ({"hold_seconds": 3}, "hold_seconds must be a whole number from 5 to 86400, not 3"),
        ({"max_steps": 0}, "max_steps must be a whole number from 1 to 10000, not 0"),
        ({"max_malformed": 0}, "max_malformed must be a whole number of at least 1, not 0"),
        ({"hold_seconds": "soon"}, "hold_seconds must be a whole number from 5 to 86400"),
        ({"limits": {"max_summary_chars": 5}}, "max_summary_chars must be a whole number from 10"),
        ({"reply_fromat": "json"}, "no field 'reply_fromat' (the fields are max_steps,"),
    ],
)
def test_a_bad_config_value_is_a_usage_error_naming_field_and_bounds(
    values: dict[str, Any], said: str
) -> None:
    with pytest.raises(UsageError, match="AgentConfig|Limits") as refused:
        AgentConfig(**values)
    assert said in str(refused.value)
    assert "pydantic" not in str(refused.value) and refused.value.__cause__ is None
