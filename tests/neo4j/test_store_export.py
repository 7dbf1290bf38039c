"""JSON Lines export and import against the server."""

from __future__ import annotations

import json

import pytest

from flowstate.errors import ValidationFailed
from flowstate.models import Category, RelationType

pytestmark = pytest.mark.neo4j


@pytest.fixture
def filled(repo, make):
    repo.commit(
        make.bundle(
            1,
            states=[
                make.state("r1", "budget", Category.CONSTRAINT, content="caf\u00e9 \u2028 \x00")
            ],
            observations=2,
            evidence=[("r1.budget", "r1.o2")],
        )
    )
    repo.commit(
        make.bundle(
            2,
            states=["budget", "plan"],
            relations=[
                (RelationType.SUPERSEDES, "r2.budget", "r1.budget"),
                (RelationType.DERIVED_FROM, "r2.plan", "r2.budget"),
            ],
            observations=1,
            evidence=[("r2.plan", "r2.o1")],
        )
    )
    return repo


def test_export_then_import_gives_an_equal_graph(filled, other_repo, raw):
    lines = list(filled.export_jsonl())
    kinds = [json.loads(line)["kind"] for line in lines]
    assert kinds.count("request") == 2 and kinds.count("relation") == 2
    assert kinds.count("evidence") == 2 and kinds.count("observation") == 3
    created = other_repo.import_jsonl(lines)
    assert (created.nodes, created.relationships) == raw.count(other_repo.namespace)
    assert raw.count(other_repo.namespace) == raw.count(filled.namespace)
    assert list(other_repo.export_jsonl()) == lines
    assert other_repo.index() == filled.index()
    rehomed = [
        b.model_copy(
            update={
                "request": b.request.model_copy(update={"namespace": filled.namespace}),
                "states": [s.model_copy(update={"namespace": filled.namespace}) for s in b.states],
                "observations": [
                    o.model_copy(update={"namespace": filled.namespace}) for o in b.observations
                ],
            }
        )
        for b in other_repo.bundles()
    ]
    assert rehomed == filled.bundles()


def test_import_into_a_non_empty_namespace_is_refused(filled):
    lines = list(filled.export_jsonl())
    before = filled.counts()
    with pytest.raises(ValidationFailed, match="not empty"):
        filled.import_jsonl(lines)
    assert filled.counts() == before


def test_malformed_line_names_it_and_imports_nothing(filled, other_repo, raw):
    lines = list(filled.export_jsonl())
    lines[3] = '{"kind": "state", "id": "r1.x"\n'
    with pytest.raises(ValidationFailed, match="line 4"):
        other_repo.import_jsonl(lines)
    assert raw.count(other_repo.namespace) == (0, 0)


def test_a_later_bad_request_imports_nothing(filled, other_repo, raw):
    lines = list(filled.export_jsonl())
    lines.append(
        json.dumps(
            {"kind": "relation", "type": "REFINES", "source": "r2.plan", "target": "r1.gone"}
        )
    )
    with pytest.raises(ValidationFailed, match=f"line {len(lines)}"):
        other_repo.import_jsonl(lines)
    assert raw.count(other_repo.namespace) == (0, 0)


def test_requests_committed_out_of_seq_order_export_and_import(repo, make, other_repo):
    """r3 committed before r2 and r2 relates to r3: the export lists commits in order, and
    the import writes r3 first."""
    repo.commit(make.bundle(1, states=["a"]))
    repo.commit(make.bundle(3, states=["plan"]))
    repo.commit(
        make.bundle(2, states=["note"], relations=[(RelationType.REFINES, "r2.note", "r3.plan")])
    )
    lines = list(repo.export_jsonl())
    kinds = [json.loads(line) for line in lines if '"kind":"request"' in line]
    assert [r["id"] for r in kinds] == ["r1", "r3", "r2"]
    other_repo.import_jsonl(lines)
    assert [b.request.id for b in other_repo.bundles()] == ["r1", "r3", "r2"]
    assert [(r.source, r.target) for b in other_repo.bundles() for r in b.relations] == [
        ("r2.note", "r3.plan")
    ]
