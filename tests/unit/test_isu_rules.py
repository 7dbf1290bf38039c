"""ISU rules: every rejection of `check_delta` (code and wording), and `apply_delta` semantics.

The engine applies a delta only when `check_delta` returns no violation. `_rejected` follows that
contract on a read-only mapping, so each rejection test also shows that nothing was applied.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from types import MappingProxyType

import pytest

from flowstate.models import (
    AddOp,
    Category,
    Evidence,
    Relation,
    RelationSpec,
    RelationType,
    RemoveOp,
    StateNode,
    UpdateOp,
)
from flowstate.rules import Applied, Limits, Violation, Visibility, apply_delta, check_delta
from flowstate.rules.isu import Op

NS = "ns_rules"
RID = "r5"
EARLIER = datetime(2025, 1, 1, tzinfo=UTC)
NOW = datetime(2025, 1, 2, tzinfo=UTC)
LIMITS = Limits()

BAD_KEY = (
    "key must be snake_case: a lowercase letter, then lowercase letters, digits or _ "
    "(at most 64; o<digits> and a<digits> are reserved for observations and actions)"
)
NOT_VISIBLE = (
    "relation target {!r} is not visible: use a key of this request, "
    "or the id of a state shown in the index or revealed"
)
NOT_OWN = "relation target {!r} is not a state of this request"
PAST_IMMUTABLE = (
    "{} belongs to past request {}; past states are never changed. "
    "Add a new state with a SUPERSEDES relation to it instead"
)
HOSTILE = "x}) DETACH DELETE n //"


# --- helpers -------------------------------------------------------------------------------


def make_vis(**overrides: object) -> Visibility:
    """What the model sees in request r5: two own states, and past states of every kind."""
    fields: dict[str, object] = {
        "request_id": RID,
        "index_states": frozenset({"r3.hotel", "r3.flight_pref"}),
        "collapsed_requests": frozenset({"r1", "r2"}),
        "opened_states": frozenset({"r2.city"}),
        "revealed": frozenset({"r4.budget"}),
        "relation_ends": frozenset({"r4.dates", "r4.o2"}),
        "observations": frozenset({"r5.o1", "r5.o2"}),
        "opened_observations": frozenset(),
    }
    fields.update(overrides)
    return Visibility(**fields)  # type: ignore[arg-type]


def make_state(key: str, request: str = RID, **fields: object) -> StateNode:
    values: dict[str, object] = {
        "namespace": NS,
        "id": f"{request}.{key}",
        "request_id": request,
        "key": key,
        "category": Category.DECISION,
        "summary": f"{key} summary",
        "content": f"{key} content",
        "created_at": EARLIER,
        "updated_at": EARLIER,
    }
    values.update(fields)
    return StateNode(**values)


def own_states(*keys: str) -> dict[str, StateNode]:
    return {k: make_state(k) for k in keys}


EXISTING = own_states("hotel_budget", "flight")


def add(
    key: str,
    *,
    category: Category = Category.DECISION,
    summary: str = "a summary",
    content: str = "some content",
    relations: Sequence[tuple[RelationType, str]] = (),
    evidence: Sequence[str] = (),
) -> AddOp:
    return AddOp(
        op="add",
        key=key,
        category=category,
        summary=summary,
        content=content,
        relations=[RelationSpec(type=t, target=target) for t, target in relations],
        evidence=list(evidence),
    )


def update(key: str, summary: str | None = None, content: str | None = None) -> UpdateOp:
    return UpdateOp(op="update", key=key, summary=summary, content=content)


def remove(key: str) -> RemoveOp:
    return RemoveOp(op="remove", key=key)


def _engine_step(
    delta: Sequence[Op],
    states: Mapping[str, StateNode],
    vis: Visibility,
    limits: Limits,
) -> tuple[list[Violation], Mapping[str, StateNode]]:
    """The engine's contract: apply only when the check finds nothing."""
    violations = check_delta(delta, vis, limits, states)
    if violations:
        return violations, states
    return violations, apply_delta(delta, vis, NS, states, [], [], NOW).states


def _rejected(
    delta: Sequence[Op],
    states: Mapping[str, StateNode] | None = None,
    vis: Visibility | None = None,
    limits: Limits = LIMITS,
) -> list[Violation]:
    before = dict(EXISTING if states is None else states)
    # Read-only: the check cannot change what it is given.
    violations, after = _engine_step(delta, MappingProxyType(before), vis or make_vis(), limits)
    assert violations, "expected the delta to be rejected"
    assert dict(after) == before
    return violations


def _only(violations: list[Violation]) -> Violation:
    assert len(violations) == 1, violations
    return violations[0]


def _accepted(
    delta: Sequence[Op],
    states: Mapping[str, StateNode] | None = None,
    vis: Visibility | None = None,
    limits: Limits = LIMITS,
) -> dict[str, StateNode]:
    states = EXISTING if states is None else states
    violations, after = _engine_step(delta, states, vis or make_vis(), limits)
    assert violations == []
    return dict(after)


# --- check_delta: size of the delta --------------------------------------------------------


def test_too_many_ops_is_one_violation_for_the_whole_delta() -> None:
    limits = Limits(max_ops_per_step=2)
    delta = [add("a"), add("b"), add("c")]
    assert _rejected(delta, limits=limits) == [
        Violation("delta", "too_many_ops", "3 operations; at most 2 per step")
    ]
    _accepted(delta[:2], limits=limits)


def test_too_many_states_per_request() -> None:
    limits = Limits(max_states_per_request=3)
    v = _only(_rejected([add("a"), add("b")], limits=limits))
    assert v == Violation("delta", "too_many_states", "this request would hold 4 states; at most 3")
    # A removal makes room in the same delta.
    _accepted([remove("flight"), add("a"), add("b")], limits=limits)


# --- check_delta: keys ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [
        "Hotel",
        "HOTEL_BUDGET",
        "hotelBudget",
        HOSTILE,
        "`hotel`",
        "ho`tel",
        "hotel` DELETE",
        "o3",
        "o12",
        "1hotel",
        "_hotel",
        "hotel-budget",
        "hotel budget",
        "hotel.budget",
        "r3.hotel",
        "r5.o1",
        "hôtel",
        "hotel\x00",
        "\nhotel",
        "hotel\n",  # `$` in KEY_PATTERN would match before it; is_key must use fullmatch
        "",
        "a" * 65,
    ],
)
def test_bad_key(key: str) -> None:
    v = _only(_rejected([add(key)]))
    assert (v.where, v.rule, v.message) == (f"delta[0] add {key}", "bad_key", BAD_KEY)


@pytest.mark.parametrize("key", ["o", "o3x", "ox1", "a" * 64, "x1_2", "hotel_"])
def test_good_keys(key: str) -> None:
    states = _accepted([add(key)])
    assert states[key].id == f"r5.{key}"


def test_key_taken_by_an_existing_state() -> None:
    v = _only(_rejected([add("hotel_budget")]))
    assert (v.where, v.rule, v.message) == (
        "delta[0] add hotel_budget",
        "key_taken",
        "key 'hotel_budget' already exists in this request; update it, or pick a new key",
    )


def test_key_taken_by_an_earlier_op_of_the_same_delta() -> None:
    v = _only(_rejected([add("room"), add("room")]))
    assert (v.where, v.rule) == ("delta[1] add room", "key_taken")


# --- check_delta: text ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("summary", "rule", "message"),
    [
        ("", "empty_summary", "summary must not be empty"),
        ("   \t ", "empty_summary", "summary must not be empty"),
        ("two\nlines", "multiline_summary", "summary must be one line"),
        ("carriage\rreturn", "multiline_summary", "summary must be one line"),
        ("trailing newline\n", "multiline_summary", "summary must be one line"),
        ("s" * 201, "summary_too_long", "summary has 201 characters; at most 200"),
    ],
)
def test_bad_summary_on_add(summary: str, rule: str, message: str) -> None:
    v = _only(_rejected([add("room", summary=summary)]))
    assert (v.where, v.rule, v.message) == ("delta[0] add room", rule, message)


def test_summary_at_the_limit_is_accepted_and_stripped() -> None:
    states = _accepted([add("room", summary="s" * 200), add("desk", summary="  padded  ")])
    assert states["room"].summary == "s" * 200
    assert states["desk"].summary == "padded"


@pytest.mark.parametrize(
    ("content", "rule", "message"),
    [
        ("", "empty_content", "content must not be empty"),
        (" \n\t ", "empty_content", "content must not be empty"),
        ("c" * 4001, "content_too_long", "content has 4001 characters; at most 4000"),
    ],
)
def test_bad_content_on_add(content: str, rule: str, message: str) -> None:
    v = _only(_rejected([add("room", content=content)]))
    assert (v.where, v.rule, v.message) == ("delta[0] add room", rule, message)


def test_multiline_content_at_the_limit_is_accepted() -> None:
    content = ("line\n" * 800)[:4000]
    assert _accepted([add("room", content=content)])["room"].content == content


def test_limits_come_from_the_limits_object() -> None:
    limits = Limits(max_summary_chars=10, max_content_chars=12)
    violations = _rejected([add("room", summary="s" * 11, content="c" * 13)], limits=limits)
    assert [(v.rule, v.message) for v in violations] == [
        ("summary_too_long", "summary has 11 characters; at most 10"),
        ("content_too_long", "content has 13 characters; at most 12"),
    ]


@pytest.mark.parametrize(
    ("op", "rule"),
    [
        (update("flight", summary=""), "empty_summary"),
        (update("flight", summary="a\nb"), "multiline_summary"),
        (update("flight", summary="s" * 201), "summary_too_long"),
        (update("flight", content="  "), "empty_content"),
        (update("flight", content="c" * 4001), "content_too_long"),
    ],
)
def test_bad_text_on_update(op: UpdateOp, rule: str) -> None:
    v = _only(_rejected([op]))
    assert (v.where, v.rule) == ("delta[0] update flight", rule)


@pytest.mark.parametrize(
    "op",
    [
        add("room", summary="nul\x00here"),
        add("room", content="nul\x00here"),
        update("flight", summary="nul\x00"),
        update("flight", content="\x00"),
    ],
    ids=["add-summary", "add-content", "update-summary", "update-content"],
)
def test_nul_character(op: Op) -> None:
    v = _only(_rejected([op]))
    assert (v.rule, v.message) == ("nul_character", "text must not contain NUL characters")


@pytest.mark.parametrize(
    "op",
    [add("room", summary="bad \ud800"), add("room", content="\udfff"), update("flight", "\ud83d")],
    ids=["add-summary", "add-content", "update-summary"],
)
def test_lone_surrogate(op: Op) -> None:
    # json.loads turns "\ud800" into a lone surrogate; StateNode would refuse it in apply_delta.
    v = _only(_rejected([op]))
    assert (v.rule, v.message) == ("invalid_unicode", "text must not contain lone surrogates")


def test_every_text_problem_of_an_op_is_listed() -> None:
    violations = _rejected([add("room", summary="", content="x\x00")])
    assert [v.rule for v in violations] == ["empty_summary", "nul_character"]


# --- check_delta: relations ----------------------------------------------------------------


def test_too_many_relations() -> None:
    limits = Limits(max_relations_per_state=2)
    rels = [(RelationType.DEPENDS_ON, t) for t in ("r3.hotel", "r2.city", "flight")]
    v = _only(_rejected([add("room", relations=rels)], limits=limits))
    assert (v.where, v.rule, v.message) == (
        "delta[0] add room",
        "too_many_relations",
        "3 relations; at most 2",
    )
    _accepted([add("room", relations=rels[:2])], limits=limits)


@pytest.mark.parametrize(
    "target",
    [
        "r3.secret",  # a past id never shown
        "r1.anything",  # inside a collapsed request that was not opened
        "r9.hotel",  # a request that does not exist
        "r5.o1",  # an observation, not a state
        "r4.o2",  # a past observation at a relation end
        HOSTILE,
        "`flight`",
        "Flight",
        " flight",
        "",
    ],
)
def test_relation_target_not_visible(target: str) -> None:
    rel = [(RelationType.DERIVED_FROM, target)]
    v = _only(_rejected([add("room", relations=rel)]))
    assert (v.where, v.rule, v.message) == (
        "delta[0] add room",
        "unknown_target",
        NOT_VISIBLE.format(target),
    )


@pytest.mark.parametrize("target", ["nope", "r5.nope", "r3"])  # `r3` reads as an own key
def test_relation_target_not_a_state_of_this_request(target: str) -> None:
    rel = [(RelationType.DEPENDS_ON, target)]
    v = _only(_rejected([add("room", relations=rel)]))
    assert (v.rule, v.message) == ("unknown_target", NOT_OWN.format(target))


@pytest.mark.parametrize(
    ("target", "resolved"),
    [
        ("r3.hotel", "r3.hotel"),  # in the index
        ("r2.city", "r2.city"),  # listed by an opened collapsed request
        ("r4.budget", "r4.budget"),  # revealed
        ("r4.dates", "r4.dates"),  # the far end of a revealed relation
        ("flight", "r5.flight"),  # own key
        ("r5.flight", "r5.flight"),  # own full id
        ("later", "r5.later"),  # own key added later in the same delta
    ],
)
def test_visible_relation_targets_are_accepted(target: str, resolved: str) -> None:
    delta = [add("room", relations=[(RelationType.DEPENDS_ON, target)]), add("later")]
    violations = check_delta(delta, make_vis(), LIMITS, EXISTING)
    assert violations == []
    applied = apply_delta(delta, make_vis(), NS, EXISTING, [], [], NOW)
    assert applied.relations == [
        Relation(type=RelationType.DEPENDS_ON, source="r5.room", target=resolved)
    ]


def test_relation_to_a_key_removed_in_the_same_delta() -> None:
    delta: list[Op] = [
        add("room", relations=[(RelationType.DEPENDS_ON, "flight")]),
        remove("flight"),
    ]
    v = _only(_rejected(delta))
    assert (v.where, v.rule, v.message) == (
        "delta[0] add room",
        "unknown_target",
        NOT_OWN.format("flight"),
    )


@pytest.mark.parametrize("target", ["room", "r5.room"])
def test_self_relation(target: str) -> None:
    v = _only(_rejected([add("room", relations=[(RelationType.REFINES, target)])]))
    assert (v.where, v.rule, v.message) == (
        "delta[0] add room",
        "self_relation",
        "a state cannot relate to itself",
    )


@pytest.mark.parametrize("target", ["flight", "r5.flight", "later"])
def test_supersedes_an_own_state_is_rejected(target: str) -> None:
    delta = [add("room", relations=[(RelationType.SUPERSEDES, target)]), add("later")]
    v = _only(_rejected(delta))
    assert (v.where, v.rule, v.message) == (
        "delta[0] add room",
        "supersede_own",
        "SUPERSEDES is for past states; change a state of this request with update",
    )


@pytest.mark.parametrize(
    ("newer", "instead"),
    [
        ("r4.budget", "supersede the newer state instead"),  # committed by a later request
        ("r5.flight", "update r5.flight instead"),  # by this request, in an earlier step
    ],
)
def test_a_past_state_is_superseded_once(newer: str, instead: str) -> None:
    vis = make_vis(superseded={"r3.hotel": newer})
    delta = [add("room", relations=[(RelationType.SUPERSEDES, "r3.hotel")])]
    v = _only(_rejected(delta, vis=vis))
    assert (v.rule, v.message) == (
        "supersede_stale",
        f"r3.hotel is already superseded by {newer}: a state is superseded once; {instead}",
    )


def test_a_state_removed_in_the_delta_no_longer_holds_its_supersession() -> None:
    vis = make_vis(superseded={"r3.hotel": "r5.flight"})
    delta: list[Op] = [
        remove("flight"),
        add("room", relations=[(RelationType.SUPERSEDES, "r3.hotel")]),
    ]
    assert check_delta(delta, vis, LIMITS, EXISTING) == []


def test_two_states_of_one_delta_cannot_supersede_the_same_past_state() -> None:
    delta = [
        add("low", relations=[(RelationType.SUPERSEDES, "r3.hotel")]),
        add("lower", relations=[(RelationType.SUPERSEDES, "r3.hotel")]),
    ]
    v = _only(_rejected(delta))
    assert (v.where, v.rule, v.message) == (
        "delta[1] add lower",
        "supersede_twice",
        "r3.hotel is superseded by low in this delta too: a state is superseded once; put "
        "the change in one state",
    )


@pytest.mark.parametrize("target", ["r3.hotel", "r4.budget", "r4.dates"])
def test_supersedes_a_visible_past_state_is_accepted(target: str) -> None:
    delta = [add("room", relations=[(RelationType.SUPERSEDES, target)])]
    assert check_delta(delta, make_vis(), LIMITS, EXISTING) == []
    applied = apply_delta(delta, make_vis(), NS, EXISTING, [], [], NOW)
    assert applied.relations == [
        Relation(type=RelationType.SUPERSEDES, source="r5.room", target=target)
    ]


# --- check_delta: evidence -----------------------------------------------------------------


def test_evidence_of_this_request_is_accepted() -> None:
    _accepted([add("room", evidence=["r5.o1", "r5.o2"])])


@pytest.mark.parametrize("obs", ["r4.o2", "r3.o1", "r5.o9", "o1", "r5.flight", HOSTILE])
def test_evidence_must_be_an_observation_of_this_request(obs: str) -> None:
    v = _only(_rejected([add("room", evidence=["r5.o1", obs])]))
    assert (v.where, v.rule, v.message) == (
        "delta[0] add room",
        "unknown_evidence",
        f"evidence {obs!r} is not an observation of this request",
    )


# --- check_delta: update and remove --------------------------------------------------------


@pytest.mark.parametrize(
    "op",
    [
        update("r3.hotel", summary="new"),
        remove("r3.hotel"),
        update("r3.secret", content="not even visible"),
        remove("r12.plan"),
    ],
    ids=["update-indexed", "remove-indexed", "update-invisible", "remove-other"],
)
def test_past_state_is_immutable(op: UpdateOp | RemoveOp) -> None:
    v = _only(_rejected([op]))
    past = op.key.split(".")[0]
    assert (v.where, v.rule, v.message) == (
        f"delta[0] {op.op} {op.key}",
        "past_state_immutable",
        PAST_IMMUTABLE.format(op.key, past),
    )
    assert "SUPERSEDES" in v.message


@pytest.mark.parametrize(
    ("op", "named"),
    [
        (update("nope", summary="x"), "nope"),
        (remove("nope"), "nope"),
        (remove("r5.nope"), "nope"),
        (update("Flight", summary="x"), "Flight"),
        (remove(HOSTILE), HOSTILE),
        (remove("r5.o1"), "r5.o1"),
    ],
)
def test_update_or_remove_unknown_key(op: UpdateOp | RemoveOp, named: str) -> None:
    v = _only(_rejected([op]))
    assert (v.where, v.rule, v.message) == (
        f"delta[0] {op.op} {op.key}",
        "unknown_key",
        f"no state {named!r} in this request",
    )


def test_update_after_remove_in_the_same_delta() -> None:
    v = _only(_rejected([remove("flight"), update("flight", summary="x")]))
    assert (v.where, v.rule) == ("delta[1] update flight", "unknown_key")


def test_empty_update() -> None:
    v = _only(_rejected([update("flight")]))
    assert (v.where, v.rule, v.message) == (
        "delta[0] update flight",
        "empty_update",
        "give a new summary, a new content, or both",
    )


def test_update_and_remove_of_a_state_added_in_the_same_delta() -> None:
    states = _accepted([add("room"), update("room", summary="changed"), add("desk")])
    assert states["room"].summary == "changed"
    assert "room" not in _accepted([add("room"), remove("room")])


def test_remove_by_full_id_frees_the_key() -> None:
    # Regression: a removal named by full id (`r5.flight`) used to leave the key live in the check.
    states = _accepted([remove("r5.flight"), add("flight", summary="again")])
    assert states["flight"].summary == "again"
    v = _only(_rejected([remove("r5.flight"), update("flight", summary="x")]))
    assert (v.where, v.rule) == ("delta[1] update flight", "unknown_key")
    delta: list[Op] = [
        remove("r5.flight"),
        add("room", relations=[(RelationType.DEPENDS_ON, "flight")]),
    ]
    v = _only(_rejected(delta))
    assert (v.where, v.rule) == ("delta[1] add room", "unknown_target")


# --- check_delta: atomicity ----------------------------------------------------------------


def test_one_bad_op_rejects_the_whole_delta() -> None:
    delta: list[Op] = [
        add("room", relations=[(RelationType.DEPENDS_ON, "r3.hotel")], evidence=["r5.o1"]),
        update("flight", summary="changed"),
        add("Bad Key"),
        remove("hotel_budget"),
    ]
    v = _only(_rejected(delta))  # nothing applied: no room, flight unchanged, budget kept
    assert (v.where, v.rule) == ("delta[2] add Bad Key", "bad_key")
    # Without the bad op the same delta goes through.
    states = _accepted([op for i, op in enumerate(delta) if i != 2])
    assert set(states) == {"room", "flight"}
    assert states["flight"].summary == "changed"


def test_every_violation_is_listed_in_op_order() -> None:
    delta: list[Op] = [
        add("o1"),
        update("ghost", summary="x"),
        add("room", relations=[(RelationType.DEPENDS_ON, "r3.secret")]),
        remove("r3.hotel"),
        add("flight"),
    ]
    violations = _rejected(delta)
    # Relation targets are checked after every op has run, so unknown_target comes last.
    assert [(v.where, v.rule) for v in violations] == [
        ("delta[0] add o1", "bad_key"),
        ("delta[1] update ghost", "unknown_key"),
        ("delta[3] remove r3.hotel", "past_state_immutable"),
        ("delta[4] add flight", "key_taken"),
        ("delta[2] add room", "unknown_target"),
    ]
    assert all(str(v) == f"{v.where}: {v.message}" for v in violations)


def test_check_delta_is_pure() -> None:
    delta: list[Op] = [add("room"), remove("flight")]
    vis = make_vis()
    first = check_delta(delta, vis, LIMITS, MappingProxyType(dict(EXISTING)))
    assert first == check_delta(delta, vis, LIMITS, MappingProxyType(dict(EXISTING))) == []


# --- apply_delta ---------------------------------------------------------------------------


def _apply(
    delta: Sequence[Op],
    states: Mapping[str, StateNode] | None = None,
    relations: Sequence[Relation] = (),
    evidence: Sequence[Evidence] = (),
) -> Applied:
    states = EXISTING if states is None else states
    assert check_delta(delta, make_vis(), LIMITS, states) == []
    return apply_delta(delta, make_vis(), NS, states, relations, evidence, NOW)


def test_add_builds_a_state_of_this_request() -> None:
    op = add("room", category=Category.CONSTRAINT, summary="  near the beach ", content=" c ")
    state = _apply([op]).states["room"]
    assert state == StateNode(
        namespace=NS,
        id="r5.room",
        request_id=RID,
        key="room",
        category=Category.CONSTRAINT,
        summary="near the beach",
        content=" c ",
        created_at=NOW,
        updated_at=NOW,
    )


def test_update_changes_only_what_is_given() -> None:
    states = _apply([update("flight", summary=" new line "), update("hotel_budget", content="c2")])
    flight, budget = states.states["flight"], states.states["hotel_budget"]
    assert (flight.summary, flight.content) == ("new line", "flight content")
    assert (budget.summary, budget.content) == ("hotel_budget summary", "c2")
    for s in (flight, budget):
        assert (s.id, s.created_at, s.updated_at) == (f"r5.{s.key}", EARLIER, NOW)


def test_update_by_full_id() -> None:
    assert _apply([update("r5.flight", content="by id")]).states["flight"].content == "by id"


def test_untouched_states_are_kept_as_they_were() -> None:
    applied = _apply([add("room")])
    assert applied.states["flight"] is EXISTING["flight"]
    assert set(applied.states) == {"hotel_budget", "flight", "room"}


def test_relations_resolve_to_full_ids() -> None:
    delta = [
        add(
            "room",
            relations=[
                (RelationType.DEPENDS_ON, "flight"),
                (RelationType.REFINES, "r5.hotel_budget"),
                (RelationType.DERIVED_FROM, "r3.hotel"),
                (RelationType.CONTRADICTS, "desk"),
            ],
        ),
        add("desk"),
    ]
    assert _apply(delta).relations == [
        Relation(type=RelationType.DEPENDS_ON, source="r5.room", target="r5.flight"),
        Relation(type=RelationType.REFINES, source="r5.room", target="r5.hotel_budget"),
        Relation(type=RelationType.DERIVED_FROM, source="r5.room", target="r3.hotel"),
        Relation(type=RelationType.CONTRADICTS, source="r5.room", target="r5.desk"),
    ]


def test_repeated_relations_and_evidence_are_deduped() -> None:
    rel = (RelationType.DEPENDS_ON, "r3.hotel")
    applied = _apply([add("room", relations=[rel, rel], evidence=["r5.o1", "r5.o2", "r5.o1"])])
    assert applied.relations == [
        Relation(type=RelationType.DEPENDS_ON, source="r5.room", target="r3.hotel")
    ]
    assert applied.evidence == [
        Evidence(state="r5.room", observation="r5.o1"),
        Evidence(state="r5.room", observation="r5.o2"),
    ]


def test_remove_drops_the_state_its_relations_and_its_evidence() -> None:
    relations = [
        Relation(type=RelationType.DEPENDS_ON, source="r5.flight", target="r3.hotel"),
        Relation(type=RelationType.REFINES, source="r5.hotel_budget", target="r5.flight"),
        Relation(type=RelationType.DERIVED_FROM, source="r5.hotel_budget", target="r2.city"),
    ]
    evidence = [
        Evidence(state="r5.flight", observation="r5.o1"),
        Evidence(state="r5.hotel_budget", observation="r5.o1"),
    ]
    applied = _apply([remove("flight")], relations=relations, evidence=evidence)
    assert set(applied.states) == {"hotel_budget"}
    assert applied.relations == [relations[2]]
    assert applied.evidence == [evidence[1]]


def test_remove_then_readd_the_same_key() -> None:
    relations = [Relation(type=RelationType.DEPENDS_ON, source="r5.flight", target="r3.hotel")]
    evidence = [Evidence(state="r5.flight", observation="r5.o1")]
    delta: list[Op] = [
        remove("flight"),
        add(
            "flight", category=Category.ARTIFACT, summary="again", content="new", evidence=["r5.o2"]
        ),
    ]
    applied = _apply(delta, relations=relations, evidence=evidence)
    flight = applied.states["flight"]
    assert (flight.category, flight.summary, flight.content) == (Category.ARTIFACT, "again", "new")
    assert flight.created_at == NOW
    assert applied.relations == []
    assert applied.evidence == [Evidence(state="r5.flight", observation="r5.o2")]


def test_apply_does_not_change_its_inputs() -> None:
    states = dict(EXISTING)
    relations = [Relation(type=RelationType.DEPENDS_ON, source="r5.flight", target="r3.hotel")]
    evidence = [Evidence(state="r5.flight", observation="r5.o1")]
    _apply([remove("flight"), update("hotel_budget", summary="x")], states, relations, evidence)
    assert states == EXISTING
    assert len(relations) == 1 and len(evidence) == 1
    assert EXISTING["hotel_budget"].summary == "hotel_budget summary"
