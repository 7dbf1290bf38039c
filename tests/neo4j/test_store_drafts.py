"""Drafts: the serialized active state of an open request, held by the writer that runs it."""

from __future__ import annotations

import json

import pytest

from flowstate.errors import NotFoundError, ValidationFailed
from flowstate.models import RelationType

pytestmark = pytest.mark.neo4j


def _payload(repo, request_id):  # noqa: ANN001, ANN202
    found = repo.open_request(request_id)
    return None if found is None else found.payload


def test_open_save_discard(repo):
    assert repo.open_requests() == []
    repo.save_draft("r1", '{"step": 1}', owner="w", first=True)
    assert _payload(repo, "r1") == '{"step": 1}'
    repo.save_draft("r1", '{"step": 2}', owner="w")
    assert _payload(repo, "r1") == '{"step": 2}'
    assert repo.counts().nodes == 1
    assert repo.discard_draft("r1", owner="w") is True
    assert repo.discard_draft("r1", owner="w") is False
    assert repo.open_requests() == []


def test_commit_removes_the_requests_draft(repo, make):
    repo.save_draft("r1", "{}", owner="w", first=True)
    repo.commit(make.bundle(1, states=["a"]), owner="w")
    assert repo.open_requests() == []


def test_failed_commit_keeps_the_draft(repo, make):
    repo.save_draft("r1", '{"keep": true}', owner="w", first=True)
    bad = make.bundle(1, states=["a"], relations=[(RelationType.REFINES, "r1.a", "r1.missing")])
    with pytest.raises(NotFoundError):
        repo.commit(bad, owner="w")
    assert _payload(repo, "r1") == '{"keep": true}'


def test_drafts_are_per_namespace(repo, other_repo):
    other_repo.save_draft("r4", "{}", owner="w", first=True)
    assert repo.open_requests() == []
    assert repo.discard_draft("r4", owner="w") is False
    assert _payload(other_repo, "r4") == "{}"


def test_payload_comes_back_byte_equal(repo):
    payload = json.dumps({"text": "quote ' \" ` }) DETACH DELETE n // $(x) \u0000 \U0001f600"})
    repo.save_draft("r1", payload, owner="w", first=True)
    assert _payload(repo, "r1") == payload


@pytest.mark.parametrize("bad", ["1", "r0", "r1; MATCH (n) DETACH DELETE n", "r1\n"])
def test_draft_request_id_is_validated(repo, bad):
    with pytest.raises(ValidationFailed, match="invalid request id"):
        repo.save_draft(bad, "{}", owner="w", first=True)
