"""The namespace's counter node (ids never reused, a stamp that shows deletions and commits)
and the holds writers keep on open requests."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest

from flowstate.errors import RequestHeld, ValidationFailed
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
    repo.forget_namespace(force=True)
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


def test_the_stamp_changes_at_every_deletion_and_counts_commits(repo, make):
    _commit(repo, make, 1, "a", "b")
    _commit(repo, make, 2)
    seen = [repo.stamp()]
    _commit(repo, make, 3)
    after = repo.stamp()
    assert after.same_content(seen[-1]) and after.committed == seen[-1].committed + 1
    seen[-1] = after  # commits are appended by commit number, not rebuilt
    repo.forget_state("r1.a")
    seen.append(repo.stamp())
    repo.forget_request("r3")
    seen.append(repo.stamp())
    repo.expire(Category.ENVIRONMENT, datetime.now(UTC) + timedelta(days=1))
    seen.append(repo.stamp())
    assert len({(x.epoch, x.generation) for x in seen}) == 4


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
    repo.forget_namespace(force=True)
    _commit(repo, make, 1)
    assert repo.stamp() != before  # same generation number, new epoch


# --- holds on open requests ----------------------------------------------------------------


def test_a_second_writer_cannot_save_take_or_discard_a_held_request(repo, store):
    other = Repository(store, repo.namespace)
    repo.save_draft("r1", '{"step": 1}', owner="host-a:11:aaaa", first=True)
    repo.save_draft("r1", '{"step": 2}', owner="host-a:11:aaaa")  # the holder saves
    with pytest.raises(RequestHeld, match="writer host-a:11:aaaa holds it") as held:
        other.save_draft("r1", '{"step": 9}', owner="host-b:22:bbbb")
    assert (held.value.request_id, held.value.owner) == ("r1", "host-a:11:aaaa")
    with pytest.raises(RequestHeld):
        other.take_over("r1", "host-b:22:bbbb")
    with pytest.raises(RequestHeld):
        other.discard_draft("r1", owner="host-b:22:bbbb")
    [open_] = other.open_requests()
    assert (open_.request_id, open_.holder, open_.held, open_.steps) == (
        "r1", "host-a:11:aaaa", True, 2,
    )  # fmt: skip


def test_many_requests_are_open_at_once_each_with_its_holder(repo):
    for seq, owner in ((1, "a"), (2, "b"), (3, "a")):
        repo.save_draft(f"r{seq}", "{}", owner=owner, first=True)
    assert {(r.request_id, r.holder) for r in repo.open_requests()} == {
        ("r1", "a"), ("r2", "b"), ("r3", "a"),
    }  # fmt: skip
    with pytest.raises(Exception, match="already exists|r2"):  # one draft per request id
        repo.save_draft("r2", "{}", owner="c", first=True)


def test_a_lapsed_hold_is_taken_and_its_old_holder_can_write_nothing(repo, make):
    repo.save_draft("r1", '{"step": 1}', owner="a", hold_s=1, first=True)
    time.sleep(1.2)
    [lapsed] = repo.open_requests()
    assert not lapsed.held
    assert repo.take_over("r1", "b") == '{"step": 1}'
    with pytest.raises(RequestHeld, match="writer b"):
        repo.save_draft("r1", '{"step": 2}', owner="a")
    with pytest.raises(RequestHeld, match="writer b"):
        repo.commit(make.bundle(1, states=["x"]), owner="a")
    assert repo.open_request("r1").payload == '{"step": 1}'  # the refused save changed nothing
    assert repo.history() == []
    repo.commit(make.bundle(1, states=["x"]), owner="b")
    assert repo.open_requests() == [] and [r.id for r in repo.history()] == ["r1"]


def test_a_request_discarded_by_another_writer_is_not_won_back_by_a_save(repo, make):
    """The taker discarded the request: the old writer, back from a pause, saves or commits
    nothing (a save never opens a draft again)."""
    repo.save_draft("r1", '{"step": 1}', owner="a", hold_s=1, first=True)
    time.sleep(1.2)
    assert repo.discard_draft("r1", owner="b")  # lapsed: anyone may drop it
    with pytest.raises(RequestHeld, match="it is not open"):
        repo.save_draft("r1", '{"step": 2}', owner="a")
    with pytest.raises(RequestHeld, match="it is not open"):
        repo.commit(make.bundle(1, states=["x"]), owner="a")
    assert repo.open_requests() == [] and repo.history() == []


def test_a_released_hold_lapses_at_once(repo):
    repo.save_draft("r1", "{}", owner="a", first=True)
    assert repo.run(repo.ops.release_hold("r1", "b")) is False  # not the holder
    assert repo.run(repo.ops.release_hold("r1", "a")) is True
    [left] = repo.open_requests()
    assert not left.held and left.holder == "a"
    assert repo.take_over("r1", "b") == "{}"


def test_holds_are_per_namespace(repo, other_repo):
    repo.save_draft("r1", "{}", owner="a", first=True)
    other_repo.save_draft("r1", "{}", owner="b", first=True)
    assert [r.holder for r in repo.open_requests()] == ["a"]
    assert [r.holder for r in other_repo.open_requests()] == ["b"]


@pytest.mark.parametrize("ttl", [0, -5, 10**9, True, 1.5])
def test_hold_lengths_are_validated(repo, ttl):
    with pytest.raises(ValidationFailed, match="a hold lasts"):
        repo.save_draft("r1", "{}", owner="a", hold_s=ttl, first=True)
