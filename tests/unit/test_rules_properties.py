"""Properties of the ISU and PSA rules over random deltas and access requests (hypothesis)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from flowstate.models import (
    AddOp,
    Category,
    Evidence,
    Observation,
    Outcome,
    Relation,
    RelationSpec,
    RelationType,
    RemoveOp,
    Request,
    RequestBundle,
    StateNode,
    UpdateOp,
    ids,
)
from flowstate.models.records import LINE_BREAKS
from flowstate.rules import Limits, Visibility, apply_delta, check_access, check_delta
from flowstate.rules.isu import Op

NS = "ns_props"
RID = "r5"
EARLIER = datetime(2025, 1, 1, tzinfo=UTC)
NOW = datetime(2025, 1, 2, tzinfo=UTC)
HOSTILE = ["x}) DETACH DELETE n //", "`a`", "a` SET n.x=1 //", "A", "o3", "", " a", "é", "a-b"]

PROPERTY = settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# A small alphabet so that ops collide: adds of taken keys, updates of removed ones...
OWN_KEYS = ["a", "b", "hotel", "flight_2"]  # some of them exist already
KEYS = [
    *OWN_KEYS,
    *HOSTILE,
    "a\n",
    "r5.a\n",
    "r5.a",
    "r5.hotel",
    "r5.o1",
    "r3.hotel",
    "r3.secret",
    "r5",
]
PAST_POOL = ["r3.hotel", "r3.flight", "r2.city", "r4.budget", "r4.dates"]
INVISIBLE = ["r3.secret", "r1.hidden", "r9.z", "r4.o2", "r3"]
OWN_OBSERVATIONS = ["r5.o1", "r5.o2"]
FRESH_KEYS = [*OWN_KEYS, "c", "d", "room"]
OBSERVATION_POOL = [*OWN_OBSERVATIONS, "r4.o2", "r3.o1", "r5.o9", "o1", "r5.a"]
TARGETS = [
    "a\n",
    "r3.hotel\n",
    *OWN_KEYS,
    "r5.a",
    "r5.b",
    "r5.hotel",
    "r5.nope",
    "nope",
    *PAST_POOL,
    *INVISIBLE,
]
WHERE = re.compile(r"^delta\[(\d+)\] (add|update|remove) (.*)$", re.DOTALL)

LIMITS = Limits(
    max_ops_per_step=6,
    max_summary_chars=20,
    max_content_chars=40,
    max_relations_per_state=3,
    max_states_per_request=6,
)


def _often(good: st.SearchStrategy[str], bad: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(good, good, good, bad)


def _text(max_size: int, plain: st.SearchStrategy[str] | None = None) -> st.SearchStrategy[str]:
    edge = ["", " ", "two\nlines", "cr\r", "nul\x00", "lone \ud800", " padded ", "x" * 45]
    plain = _plain(max_size) if plain is None else plain
    return _often(plain, st.sampled_from(edge) | st.text(max_size=max_size + 4))


def _plain(max_size: int, alphabet: str = "ab z_é-") -> st.SearchStrategy[str]:
    """Valid text: starts with a letter, so it is never blank."""
    tail = st.text(alphabet=alphabet, max_size=max_size - 1)
    return st.builds(str.__add__, st.sampled_from("abé"), tail)


def _content() -> st.SearchStrategy[str]:
    return _plain(40, alphabet="ab z_é-\n")


# Chaotic ops: any key, any text, any target; mostly well-formed parts, so they sometimes pass.
keys = _often(st.sampled_from([*OWN_KEYS, "c", "d"]), st.sampled_from(KEYS))
adds = st.builds(
    AddOp,
    op=st.just("add"),
    key=keys,
    category=st.sampled_from(Category),
    summary=_text(20),
    content=_text(40, _content()),
    relations=st.lists(
        st.builds(
            RelationSpec,
            type=st.sampled_from(RelationType),
            target=_often(st.sampled_from([*OWN_KEYS, *PAST_POOL]), st.sampled_from(TARGETS)),
        ),
        max_size=4,
    ),
    evidence=st.lists(
        _often(st.sampled_from(OWN_OBSERVATIONS), st.sampled_from(OBSERVATION_POOL)), max_size=3
    ),
)
updates = st.builds(
    UpdateOp,
    op=st.just("update"),
    key=keys,
    summary=st.none() | _text(20),
    content=st.none() | _text(40, _content()),
)
removes = st.builds(RemoveOp, op=st.just("remove"), key=keys)
chaotic_ops = st.one_of(adds, adds, updates, removes)


@st.composite
def visibilities(draw: st.DrawFn) -> Visibility:
    def subset(pool: list[str]) -> frozenset[str]:
        return frozenset(draw(st.lists(st.sampled_from(pool), unique=True)))

    return Visibility(
        request_id=RID,
        index_states=subset(PAST_POOL),
        collapsed_requests=subset(["r1", "r2"]),
        opened_states=subset(PAST_POOL),
        revealed=subset(PAST_POOL),
        relation_ends=subset([*PAST_POOL, "r4.o2"]),
        observations=frozenset(OWN_OBSERVATIONS),
    )


def make_state(key: str) -> StateNode:
    return StateNode(
        namespace=NS,
        id=ids.state_id(RID, key),
        request_id=RID,
        key=key,
        category=Category.DECISION,
        summary=f"{key} summary",
        content=f"{key} content",
        created_at=EARLIER,
        updated_at=EARLIER,
    )


existing_states = st.lists(st.sampled_from(OWN_KEYS), unique=True).map(
    lambda keys: {k: make_state(k) for k in keys}
)


def _local(key: str) -> str:
    return key.split(".", 1)[1] if ids.is_state_id(key) else key


@dataclass
class _Draft:
    """What a well-behaved model knows while it writes a delta."""

    live: set[str]  # own keys alive after the ops so far
    past: list[str]  # visible past state ids
    pinned: set[str] = field(default_factory=set)  # own keys used as relation targets
    superseded: set[str] = field(default_factory=set)  # past ids superseded (once) so far

    def name(self, draw: st.DrawFn, keys: set[str]) -> str:
        key = draw(st.sampled_from(sorted(keys)))
        return draw(st.sampled_from([key, ids.state_id(RID, key)]))

    def add(self, draw: st.DrawFn) -> AddOp:
        fresh = sorted(set(FRESH_KEYS) - self.live) or FRESH_KEYS
        relations = []
        for _ in range(draw(st.integers(0, LIMITS.max_relations_per_state))):
            if self.past and (not self.live or draw(st.booleans())):
                target, types = draw(st.sampled_from(self.past)), list(RelationType)
                if target in self.superseded:
                    types.remove(RelationType.SUPERSEDES)
            elif self.live:
                target = self.name(draw, self.live)
                types = [t for t in RelationType if t is not RelationType.SUPERSEDES]
                self.pinned.add(_local(target))
            else:
                break
            relations.append(RelationSpec(type=draw(st.sampled_from(types)), target=target))
            if relations[-1].type is RelationType.SUPERSEDES:
                self.superseded.add(target)
        return AddOp(
            op="add",
            key=draw(st.sampled_from(fresh)),
            category=draw(st.sampled_from(Category)),
            summary=draw(_plain(20)),
            content=draw(_content()),
            relations=relations,
            evidence=draw(st.lists(st.sampled_from(OWN_OBSERVATIONS), max_size=3)),
        )

    def op(self, draw: st.DrawFn) -> Op:
        kinds = ["update"] if self.live else []
        if len(self.live) < LIMITS.max_states_per_request:
            kinds += ["add", "add"]
        if self.live - self.pinned:
            kinds.append("remove")  # never a state that a relation points at
        kind = draw(st.sampled_from(kinds))
        if kind == "add":
            return self.add(draw)
        if kind == "remove":
            return RemoveOp(op="remove", key=self.name(draw, self.live - self.pinned))
        summary, content = draw(st.sampled_from([(True, False), (False, True), (True, True)]))
        return UpdateOp(
            op="update",
            key=self.name(draw, self.live),
            summary=draw(_plain(20)) if summary else None,
            content=draw(_content()) if content else None,
        )

    def ran(self, op: Op) -> None:
        if isinstance(op, AddOp):
            self.live.add(op.key)
        elif isinstance(op, RemoveOp):
            self.live.discard(_local(op.key))


Case = tuple[list[Op], Visibility, dict[str, StateNode]]


@st.composite
def cases(draw: st.DrawFn, chaos: bool = True) -> Case:
    """A delta written by a well-behaved model; with chaos, one op in five is random."""
    vis = draw(visibilities())
    existing = draw(existing_states)
    # past_states also holds observation ids seen at relation ends; those are not targets.
    past = sorted(p for p in vis.past_states if ids.is_state_id(p))
    draft = _Draft(set(existing), past)
    delta: list[Op] = []
    most = LIMITS.max_ops_per_step + (1 if chaos else 0)
    for _ in range(draw(st.integers(1, most))):
        chaotic = chaos and draw(st.integers(0, 4)) == 0
        op = draw(chaotic_ops) if chaotic else draft.op(draw)
        delta.append(op)
        draft.ran(op)
    return delta, vis, existing


def _live_keys(delta: list[Op], existing: dict[str, StateNode]) -> set[str]:
    keys = set(existing)
    for op in delta:
        if isinstance(op, AddOp):
            keys.add(op.key)
        elif isinstance(op, RemoveOp):
            keys.discard(_local(op.key))
    return keys


# --- ISU -----------------------------------------------------------------------------------


@PROPERTY
@given(case=cases())
def test_a_checked_delta_applies_and_stays_inside_this_request(case: Case) -> None:
    delta, vis, existing = case
    frozen = MappingProxyType(dict(existing))
    violations = check_delta(delta, vis, LIMITS, frozen)  # (1) never raises
    assert dict(frozen) == existing
    assert check_delta(delta, vis, LIMITS, frozen) == violations
    event("rejected" if violations else f"applied {len(delta)} ops")
    if violations:
        return
    applied = apply_delta(delta, vis, NS, frozen, [], [], NOW)  # (2) then apply succeeds
    own_ids = {s.id for s in applied.states.values()}
    assert set(applied.states) == _live_keys(delta, existing)
    for key, state in applied.states.items():
        assert state.id == f"{RID}.{key}" and state.key == key
        assert state.request_id == RID and state.namespace == NS
        assert ids.is_state_id(state.id)
        # update goes through model_copy, which skips validation: validate again.
        assert StateNode.model_validate(state.model_dump()) == state
    for rel in applied.relations:
        assert rel.source in own_ids
        assert rel.target in own_ids or rel.target in vis.past_states
        assert rel.source != rel.target
        if rel.type is RelationType.SUPERSEDES:
            assert rel.target in vis.past_states
    for ev in applied.evidence:
        assert ev.state in own_ids and ev.observation in vis.observations
    touched = {_local(op.key) for op in delta}
    for key, state in existing.items():
        if key not in touched:
            assert applied.states[key] is state
    # The result is a consistent bundle for the store (it refuses anything outside r5).
    RequestBundle(
        request=Request(
            namespace=NS, id=RID, seq=5, text="t", summary="s", outcome=Outcome.ANSWERED
        ),
        states=list(applied.states.values()),
        relations=applied.relations,
        evidence=applied.evidence,
        observations=[
            Observation(namespace=NS, id=o, request_id=RID, step=0, tool="t", output="")
            for o in sorted(vis.observations)
        ],
    )


@PROPERTY
@given(case=cases(chaos=False))
def test_a_well_formed_delta_is_accepted(case: Case) -> None:
    delta, vis, existing = case
    assert check_delta(delta, vis, LIMITS, existing) == []
    applied = apply_delta(delta, vis, NS, existing, [], [], NOW)
    assert set(applied.states) == _live_keys(delta, existing)
    # What the last add of each surviving key asked for is all there, with full ids.
    last_adds = {op.key: op for op in delta if isinstance(op, AddOp)}
    for key, op in last_adds.items():
        if key not in applied.states:
            continue
        sid = ids.state_id(RID, key)
        for spec in op.relations:
            target = spec.target if ids.is_state_id(spec.target) else ids.state_id(RID, spec.target)
            assert Relation(type=spec.type, source=sid, target=target) in applied.relations
        for obs in op.evidence:
            assert Evidence(state=sid, observation=obs) in applied.evidence


@PROPERTY
@given(case=cases())
def test_every_violation_names_its_operation(case: Case) -> None:
    delta, vis, existing = case
    violations = check_delta(delta, vis, LIMITS, existing)  # (3)
    for v in violations:
        assert v.rule and v.message.strip()
        if v.rule in ("too_many_ops", "too_many_states"):
            assert v.where == "delta"
            continue
        match = WHERE.match(v.where)
        assert match, v.where
        op = delta[int(match[1])]
        assert (match[2], match[3]) == (op.op, op.key)


@PROPERTY
@given(good=st.lists(adds, max_size=4), vis=visibilities(), existing=existing_states)
def test_a_past_state_update_anywhere_rejects_the_delta(
    good: list[Op], vis: Visibility, existing: dict[str, StateNode]
) -> None:
    for i in range(len(good) + 1):
        delta = [*good[:i], UpdateOp(op="update", key="r3.hotel", summary="x"), *good[i:]]
        rules = [v.rule for v in check_delta(delta, vis, LIMITS, existing)]
        assert "past_state_immutable" in rules


# Text the rules accept, generated as such: one line for a summary (none of the characters
# str.splitlines() breaks on), no NUL, no lone surrogate, not blank, within the limits.
_anywhere = st.characters(codec="utf-8", exclude_characters="\x00" + LINE_BREAKS)
_mark = _anywhere.filter(lambda ch: not ch.isspace())  # what makes a text not blank


def _valid(max_size: int, chars: st.SearchStrategy[str] = _anywhere) -> st.SearchStrategy[str]:
    half = (max_size - 1) // 2
    return st.builds(
        lambda head, mark, tail: head + mark + tail,
        st.text(chars, max_size=half),
        _mark,
        st.text(chars, max_size=max_size - 1 - half),
    )


valid_summaries = _valid(LIMITS.max_summary_chars)
valid_contents = _valid(LIMITS.max_content_chars, _anywhere | st.sampled_from("\n\r\u2028"))
# An update gives a new summary, a new content, or both.
new_texts = st.sampled_from([(True, False), (False, True), (True, True)]).flatmap(
    lambda which: st.tuples(
        valid_summaries if which[0] else st.none(), valid_contents if which[1] else st.none()
    )
)


def _text_delta(
    summary: str, content: str, new: tuple[str | None, str | None]
) -> tuple[list[Op], Visibility, dict[str, StateNode]]:
    existing = {"a": make_state("a")}
    vis = Visibility(RID, frozenset({"a"}), frozenset(), frozenset())
    delta: list[Op] = [
        AddOp(op="add", key="b", category=Category.ARTIFACT, summary=summary, content=content),
        UpdateOp(op="update", key="a", summary=new[0], content=new[1]),
    ]
    return delta, vis, existing


@PROPERTY
@given(summary=valid_summaries, content=valid_contents, new=new_texts)
def test_valid_text_is_accepted_and_stored_as_given(
    summary: str, content: str, new: tuple[str | None, str | None]
) -> None:
    delta, vis, existing = _text_delta(summary, content, new)
    assert check_delta(delta, vis, LIMITS, existing) == []
    applied = apply_delta(delta, vis, NS, existing, [], [], NOW)
    added, updated = applied.states["b"], applied.states["a"]
    assert (added.summary, added.content) == (summary, content)
    old = existing["a"]
    assert updated.summary == (new[0] if new[0] is not None else old.summary)
    assert updated.content == (new[1] if new[1] is not None else old.content)
    for state in (added, updated):
        # update goes through model_copy, which skips validation: validate again.
        assert StateNode.model_validate(state.model_dump()) == state


# One defect in otherwise valid text, and the rule that names it.
_BLANK = st.sampled_from(["", " ", "\t", " \u3000 ", "\u2003"])


@st.composite
def defects(draw: st.DrawFn) -> tuple[str, str, str]:
    """(field, text, rule): a summary or content with exactly one thing wrong."""
    field_ = draw(st.sampled_from(["summary", "content"]))
    limit = LIMITS.max_summary_chars if field_ == "summary" else LIMITS.max_content_chars
    rules = ["empty", "too_long", "nul_character", "invalid_unicode"]
    rule = draw(st.sampled_from([*rules, "multiline"] if field_ == "summary" else rules))
    if rule == "empty":
        return field_, draw(_BLANK), f"empty_{field_}"
    base = draw(_valid(limit - 1))  # room for one more character
    if rule == "too_long":
        return field_, base + "x" * (limit + 1 - len(base)), f"{field_}_too_long"
    odd = {
        "nul_character": st.just("\x00"),
        "invalid_unicode": st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
        "multiline": st.sampled_from(LINE_BREAKS),
    }[rule]
    at = draw(st.integers(0, len(base)))
    text = base[:at] + draw(odd) + base[at:]
    return field_, text, "multiline_summary" if rule == "multiline" else rule


@PROPERTY
@given(defect=defects(), summary=valid_summaries, content=valid_contents, new=new_texts)
def test_a_text_defect_is_refused_by_its_own_rule_on_its_own_op(
    defect: tuple[str, str, str], summary: str, content: str, new: tuple[str | None, str | None]
) -> None:
    field_, text, rule = defect
    texts = {"summary": summary, "content": content, field_: text}
    delta, vis, existing = _text_delta(texts["summary"], texts["content"], new)
    violations = check_delta(delta, vis, LIMITS, existing)
    assert [(v.where, v.rule) for v in violations] == [("delta[0] add b", rule)]


# --- PSA -----------------------------------------------------------------------------------

ASKABLE = [
    *PAST_POOL,
    *INVISIBLE,
    "r1",
    "r2",
    "r4",
    "r5",
    "r5.a",
    "r5.o1",
    "r4.o2",
    " r3.hotel ",
    *HOSTILE,
]


@PROPERTY
@given(
    asked=st.lists(st.sampled_from(ASKABLE) | st.text(max_size=12), max_size=10),
    vis=visibilities(),
    k=st.integers(min_value=1, max_value=6),
)
def test_access_accepts_only_visible_ids_and_at_most_k(
    asked: list[str], vis: Visibility, k: int
) -> None:
    decision = check_access(asked, vis, Limits(max_access_per_step=k))
    accepted = [*decision.states, *decision.requests, *decision.observations]
    assert len(accepted) <= k
    assert len(set(accepted)) == len(accepted)
    assert set(decision.states) <= vis.past_states - vis.revealed
    assert all(ids.is_state_id(s) and ids.request_of(s) != RID for s in decision.states)
    assert set(decision.requests) <= vis.collapsed_requests
    assert set(decision.observations) <= vis.relation_ends
    assert all(ids.is_observation_id(o) for o in decision.observations)
    assert set(decision.already_open) <= vis.revealed | vis.opened_observations
    unique = list(dict.fromkeys(a.strip() for a in asked))
    if len(unique) > k:
        assert accepted == [] and [v.rule for v in decision.violations] == ["too_many_ids"]
        return
    # Every distinct id is answered exactly once: accepted, already open, or refused.
    refused = [v.where.removeprefix("access ") for v in decision.violations]
    assert sorted([*accepted, *decision.already_open, *refused]) == sorted(unique)
    assert all(v.message.strip() for v in decision.violations)
