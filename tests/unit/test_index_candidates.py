"""The index's look past its loaded requests, as a plan: one bounded statement, and a range line
whose count stays exact when an old request is listed apart."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from flowstate.engine.index import MAX_MATCHED, HistoricalIndex, OlderRange
from flowstate.models import Category, ids
from flowstate.models.views import IndexRequest, IndexState
from flowstate.store.catalog import Q
from flowstate.store.ops import Ops
from flowstate.store.plans import Read
from flowstate.store.search import CANDIDATE_SCAN, RECENT_COMMITS, namespace_term

ASK = "remind me of the deploy window for billing-api"


def _request(seq: int, summary: str, state: str, key: str = "fact") -> IndexRequest:
    line = IndexState(id=f"r{seq}.{key}", category=Category.ENVIRONMENT, summary=state)
    return IndexRequest(id=f"r{seq}", seq=seq, summary=summary, states=[line])


def _window() -> HistoricalIndex:
    """r91-r120 loaded with their lines; r1-r90 only counted, as a large namespace loads."""
    index = HistoricalIndex(
        [_request(seq, f"Team lunch {seq}", f"Lunch {seq} at cafe {seq}") for seq in range(91, 121)]
    )
    index.older = OlderRange(first_seq=1, last_seq=90, count=90)
    index.lines_below = 91
    return index


def _drive(index: HistoricalIndex, rows: list[dict[str, Any]]) -> list[Read]:
    """Run `load_matching`, answering its one statement with `rows`: the ops it yielded."""
    plan = index.load_matching(Ops("u42"), ASK, committed=120)
    ops = [next(plan)]
    try:
        ops.append(plan.send(rows))
    except StopIteration:
        return ops  # type: ignore[return-value]
    raise AssertionError(f"a second round trip: {ops[-1]!r}")


def _accounted(text: str, total: int) -> set[int]:
    """The seqs listed on their own lines, once the range line is checked to count the rest."""
    listed = {int(seq) for seq in re.findall(r"^r(\d+): ", text, re.M)}
    found = re.match(r"r(\d+)-r(\d+): (\d+) older requests", text)
    assert found is not None
    first, last, count = (int(g) for g in found.groups())
    folded = set(range(first, last + 1)) - listed
    assert count == len(folded) and listed | folded == set(range(1, total + 1))
    return listed


def test_one_bounded_statement_finds_the_older_candidates() -> None:
    index = _window()
    deploy = _request(1, "Deploy window", "Deploy window for billing-api is Tuesday", "deploy")
    [op] = _drive(index, [deploy.model_dump()])
    assert isinstance(op, Read) and op.name is Q.INDEX_CANDIDATES
    assert op.params["limit"] == MAX_MATCHED and op.params["scan"] == CANDIDATE_SCAN
    assert op.params["recent"] == RECENT_COMMITS
    assert (op.params["below"], op.params["upto"]) == (91, 120)
    assert op.params["query"].startswith(f"+namespace_term:{namespace_term('u42')} ")
    text = index.render(ASK).text
    assert "folded (listed below: r1); " in text.splitlines()[0]
    assert 1 in _accounted(text, 120)
    assert "\nr1: Deploy window\n  r1.deploy [environment] Deploy window for billing-api" in text


def test_a_candidate_loaded_already_is_not_taken_from_the_count() -> None:
    index = _window()
    again = _request(95, "Team lunch 95", "Lunch 95 and the deploy window for billing-api")
    _drive(index, [again.model_dump()])
    assert index.older == OlderRange(first_seq=1, last_seq=90, count=90)
    assert 95 in _accounted(index.render(ASK).text, 120)


def test_the_count_stays_exact_with_several_candidates() -> None:
    index = _window()
    found = [
        _request(seq, f"Deploy {seq}", f"Deploy window {seq} for billing-api", "deploy")
        for seq in (3, 40, 90)
    ]
    _drive(index, [r.model_dump() for r in found])
    assert index.older is not None and index.older.count == 87
    assert {3, 40, 90} <= _accounted(index.render(ASK).text, 120)


def test_an_index_that_holds_every_request_asks_nothing() -> None:
    index = HistoricalIndex([_request(1, "Deploy window", "Deploy window is Tuesday")])
    plan = index.load_matching(Ops("u42"), ASK, committed=1)
    assert next(plan, None) is None  # everything is loaded with its lines: no round trip


NAMESPACES = st.from_regex(ids.NAMESPACE_PATTERN.removesuffix("$") + r"\Z", fullmatch=True)


@given(NAMESPACES, NAMESPACES)
def test_each_namespace_has_its_own_term_of_one_plain_word(a: str, b: str) -> None:
    # One run of lowercase letters and digits (one token of the index's analyzer, within its
    # 255 characters), and one-to-one: no other namespace's states carry it.
    term = namespace_term(a)
    assert re.fullmatch(r"ns[a-z2-7]{2,205}", term)
    assert (term == namespace_term(b)) == (a == b)
