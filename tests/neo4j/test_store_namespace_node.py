"""The namespace's counter node: ids never reused, a stamp that shows deletions, the lease."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest

from flowstate.errors import NamespaceBusy, ValidationFailed
from flowstate.models import Category
from flowstate.store import Repository

pytestmark = pytest.mark.neo4j


def _commit(repo, make, seq, *keys):  # noqa: ANN001, ANN002, ANN202
    repo.commit(make.bundle(seq, states=list(keys) or ["a"]))


# --- ids are never handed out twice -----------------------------------------------------


def test_forgetting_the_newest_request_does_not_free_its_id(repo, make):
    _commit(repo, make, 1)
    _commit(repo, make, 2)
    repo.forget_request("r2")
    assert repo.next_request_seq() == 3
    assert repo.allocate_request_seq() == 3


def test_forgetting_every_request_keeps_the_count(repo, make):
    for seq in (1, 2, 3):
        _commit(repo, make, seq)
    for rid in ("r3", "r1", "r2"):
        repo.forget_request(rid)
    assert repo.history() == []
    assert repo.allocate_request_seq() == 4


def test_a_handed_out_seq_is_not_handed_out_again_even_uncommitted(repo):
    assert [repo.allocate_request_seq() for _ in range(3)] == [1, 2, 3]
    assert repo.next_request_seq() == 4


def test_a_namespace_without_counter_is_covered_before_a_forget(repo, make, raw):
    """Namespaces written before the counter existed: the first forget records the highest seq."""
    _commit(repo, make, 1)
    _commit(repo, make, 2)
    raw.rows("MATCH (m:Namespace {namespace: $ns}) DETACH DELETE m", ns=repo.namespace)
    repo.forget_request("r2")
    assert repo.allocate_request_seq() == 3


def test_retention_of_the_newest_request_keeps_the_count(repo, make):
    old = datetime(2024, 1, 1, tzinfo=UTC)
    state = make.state("r1", "a", Category.ENVIRONMENT, created_at=old, updated_at=old)
    repo.commit(make.bundle(1, states=[state]))
    repo.expire(Category.ENVIRONMENT, datetime.now(UTC))
    repo.forget_request("r1")
    assert repo.next_request_seq() == 2


def test_forgetting_the_whole_namespace_starts_again_at_r1(repo, make, raw):
    _commit(repo, make, 1)
    assert raw.counter(repo.namespace)[0]["m"]["last_seq"] == 1
    repo.forget_namespace()
    assert raw.count(repo.namespace) == (0, 0)
    assert raw.counter(repo.namespace) == []  # the counter node too: nothing is left
    assert repo.next_request_seq() == 1


def test_concurrent_allocations_never_share_a_seq(repo):
    with ThreadPoolExecutor(8) as pool:
        seqs = list(pool.map(lambda _: repo.allocate_request_seq(), range(40)))
    assert sorted(seqs) == list(range(1, 41))


def test_import_refuses_ids_the_namespace_already_handed_out(repo, make, store, other_repo):
    _commit(repo, make, 1)
    _commit(repo, make, 2)
    lines = list(repo.export_jsonl())
    other_repo.allocate_request_seq()  # r1 handed out there (then discarded, say)
    with pytest.raises(ValidationFailed, match=r"handed out request ids up to r1"):
        other_repo.import_jsonl(lines)
    assert other_repo.history() == []


def test_import_moves_the_counter_past_the_imported_ids(repo, make, other_repo):
    _commit(repo, make, 1)
    _commit(repo, make, 5)
    other_repo.import_jsonl(list(repo.export_jsonl()))
    other_repo.forget_request("r5")
    assert other_repo.next_request_seq() == 6


# --- the stamp: what a cached index was built at ------------------------------------------


def test_the_stamp_changes_at_every_deletion_and_not_at_commits(repo, make):
    _commit(repo, make, 1, "a", "b")
    _commit(repo, make, 2)
    seen = [repo.stamp()]
    _commit(repo, make, 3)
    assert repo.stamp() == seen[-1]  # commits are picked up by seq
    repo.forget_state("r1.a")
    seen.append(repo.stamp())
    repo.forget_request("r3")
    seen.append(repo.stamp())
    repo.expire(Category.ENVIRONMENT, datetime.now(UTC) + timedelta(days=1))
    seen.append(repo.stamp())
    assert len(set(seen)) == 4


def test_retention_that_expires_nothing_keeps_the_stamp(repo, make):
    _commit(repo, make, 1)
    before = repo.stamp()
    assert repo.expire("observation", datetime(2000, 1, 1, tzinfo=UTC)).nodes == 0
    assert repo.stamp() == before


def test_a_failed_forget_keeps_the_stamp(repo, make):
    _commit(repo, make, 1)
    before = repo.stamp()
    with pytest.raises(Exception, match="r9"):
        repo.forget_request("r9")
    assert repo.stamp() == before


def test_a_namespace_forgotten_and_written_again_has_a_new_stamp(repo, make):
    _commit(repo, make, 1)
    before = repo.stamp()
    repo.forget_namespace()
    _commit(repo, make, 1)
    assert repo.stamp() != before  # same generation number, new epoch


# --- the writer lease ---------------------------------------------------------------------


def test_a_second_writer_is_refused_naming_the_holder(repo, store):
    other = Repository(store, repo.namespace)
    repo.acquire_lease("host-a:11:aaaa", 60)
    repo.acquire_lease("host-a:11:aaaa", 60)  # renewing is fine
    with pytest.raises(NamespaceBusy, match="writer host-a:11:aaaa holds its lease") as busy:
        other.acquire_lease("host-b:22:bbbb", 60)
    assert busy.value.owner == "host-a:11:aaaa"
    assert repo.lease().owner == "host-a:11:aaaa"
    assert other.release_lease("host-b:22:bbbb") is False  # not the holder: nothing released
    assert repo.release_lease("host-a:11:aaaa") is True
    other.acquire_lease("host-b:22:bbbb", 60)
    assert repo.lease().owner == "host-b:22:bbbb"


def test_an_expired_lease_is_taken_and_its_old_holder_can_write_nothing(repo, make):
    repo.acquire_lease("a", 1)
    repo.save_draft("r1", '{"step": 1}', owner="a", lease_s=1)
    time.sleep(1.2)
    repo.acquire_lease("b", 60)
    with pytest.raises(NamespaceBusy, match="writer b"):
        repo.save_draft("r1", '{"step": 2}', owner="a")
    with pytest.raises(NamespaceBusy):
        repo.commit(make.bundle(1, states=["x"]), owner="a")
    assert repo.load_draft() == ("r1", '{"step": 1}')  # the refused save changed nothing
    assert repo.history() == []


def test_a_lease_taken_over_and_released_is_not_won_back_by_a_save(repo, make):
    """The taker discarded the request and let the lease go: the old writer, back from a
    pause, saves or commits nothing (a save renews only a lease still its own)."""
    repo.acquire_lease("a", 1)
    repo.save_draft("r1", '{"step": 1}', owner="a", lease_s=1)
    time.sleep(1.2)
    repo.acquire_lease("b", 60)
    assert repo.discard_draft("r1") and repo.release_lease("b")
    with pytest.raises(NamespaceBusy, match="writer a lost namespace .* let it go"):
        repo.save_draft("r1", '{"step": 2}', owner="a")
    with pytest.raises(NamespaceBusy, match="writer a lost namespace"):
        repo.commit(make.bundle(1, states=["x"]), owner="a")
    assert repo.load_draft() is None and repo.history() == [] and repo.lease() is None
    repo.acquire_lease("a", 60)  # a new request acquires it anew
    repo.save_draft("r2", '{"step": 1}', owner="a")


def test_leases_are_per_namespace(repo, other_repo):
    repo.acquire_lease("a", 60)
    other_repo.acquire_lease("b", 60)
    assert (repo.lease().owner, other_repo.lease().owner) == ("a", "b")


@pytest.mark.parametrize("ttl", [0, -5, 10**9, True, 1.5])
def test_lease_lengths_are_validated(repo, ttl):
    with pytest.raises(ValidationFailed, match="a lease lasts"):
        repo.acquire_lease("a", ttl)
