"""Drafts: the in-flight request's serialized active state."""

from __future__ import annotations

import json

import pytest

from flowstate.errors import NotFoundError, ValidationFailed
from flowstate.models import RelationType

pytestmark = pytest.mark.neo4j


def test_save_load_upsert_discard(repo):
    assert repo.load_draft() is None
    repo.save_draft("r1", '{"step": 1}')
    assert repo.load_draft() == ("r1", '{"step": 1}')
    repo.save_draft("r1", '{"step": 2}')
    assert repo.load_draft() == ("r1", '{"step": 2}')
    assert repo.counts().nodes == 1
    assert repo.discard_draft("r1") is True
    assert repo.discard_draft("r1") is False
    assert repo.load_draft() is None


def test_commit_removes_the_requests_draft(repo, make):
    repo.save_draft("r1", "{}")
    repo.commit(make.bundle(1, states=["a"]))
    assert repo.load_draft() is None


def test_failed_commit_keeps_the_draft(repo, make):
    repo.save_draft("r1", '{"keep": true}')
    bad = make.bundle(1, states=["a"], relations=[(RelationType.REFINES, "r1.a", "r1.missing")])
    with pytest.raises(NotFoundError):
        repo.commit(bad)
    assert repo.load_draft() == ("r1", '{"keep": true}')


def test_drafts_are_per_namespace(repo, other_repo):
    other_repo.save_draft("r4", "{}")
    assert repo.load_draft() is None
    assert repo.discard_draft("r4") is False
    assert other_repo.load_draft() == ("r4", "{}")


def test_payload_comes_back_byte_equal(repo):
    payload = json.dumps({"text": "quote ' \" ` }) DETACH DELETE n // $(x) \u0000 \U0001f600"})
    repo.save_draft("r1", payload)
    assert repo.load_draft() == ("r1", payload)


@pytest.mark.parametrize("bad", ["1", "r0", "r1; MATCH (n) DETACH DELETE n", "r1\n"])
def test_draft_request_id_is_validated(repo, bad):
    with pytest.raises(ValidationFailed, match="invalid request id"):
        repo.save_draft(bad, "{}")
