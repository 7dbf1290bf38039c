"""What the many-writer fault run left, judged against what its writers said they did.

- lost: a request a writer heard answered whose token no committed request holds;
- duplicated: a token held by more than one committed request;
- ids: r1..rN, each once; a missing id must be a request that was discarded (a killed
  writer's, or one that failed), or one a killed writer had been handed before its first
  draft landed (nothing of it was ever written);
- guard decisions: an approval citing a state that a request committed before the guard
  started superseded, or a denial for staleness when nothing committed by the end of the guard
  call superseded the cited state, is inconsistent. The commit counter read before and after
  each guard call tells which commits came before it: the requests committed after a counter
  value are those `index_since` returns.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from flowstate.models import RelationType
from flowstate.store import Repository


@dataclass
class Checked:
    committed: int = 0  # requests of the writers (the seed request aside)
    answered: int = 0
    committed_unanswered: int = 0  # committed, but the writer was killed before it heard
    lost: int = 0
    duplicated: int = 0
    without_mark: int = 0
    highest_id: int = 0
    gaps: list[str] = field(default_factory=list)  # ids never committed
    gaps_discarded: int = 0
    gaps_killed_before_first_draft: int = 0
    unexplained_gaps: list[str] = field(default_factory=list)  # none of the above
    supersessions: int = 0
    guard_approved: int = 0
    guard_denied_stale: int = 0
    guard_denied_other: int = 0  # by a rule that does not depend on others' commits
    guard_denied_other_reasons: dict[str, int] = field(default_factory=dict)  # the commonest
    guard_unlogged: int = 0  # decisions whose writer's counter readings are missing
    guard_inconsistent: int = 0
    states_checked: int = 0
    problems: list[str] = field(default_factory=list)


def check(
    repo: Repository, events: list[dict[str, Any]], discarded: set[str], unsaved: set[str]
) -> Checked:
    found = Checked()
    bundles = [b for b in repo.bundles() if b.request.id != "r1"]  # r1: the seed budget
    holders: dict[str, list[str]] = defaultdict(list)
    superseder: dict[str, str] = {}  # past state -> the request whose state superseded it
    for bundle in bundles:
        rid = bundle.request.id
        marks = [s.content for s in bundle.states if s.key == "mark"]
        found.states_checked += len(bundle.states)
        if not marks:
            found.without_mark += 1
            found.problems.append(f"{rid} was committed without its mark")
        for token in marks:
            holders[token].append(rid)
        for relation in bundle.relations:
            if relation.type is RelationType.SUPERSEDES:
                found.supersessions += 1
                if relation.target in superseder:
                    found.problems.append(f"{relation.target} superseded twice")
                superseder[relation.target] = rid
    found.committed = len(bundles)
    _tokens(found, holders, events)
    _ids(found, repo, {b.request.seq for b in bundles} | {1}, discarded, unsaved)
    guards = {e["request_id"]: e for e in events if e["event"] == "guard"}
    _guards(found, repo, bundles, superseder, guards)
    return found


def _tokens(found: Checked, holders: dict[str, list[str]], events: list[dict[str, Any]]) -> None:
    answered = {e["token"]: e["request_id"] for e in events if e["event"] == "answered"}
    found.answered = len(answered)
    for token, rid in answered.items():
        if rid not in holders.get(token, []):
            found.lost += 1
            found.problems.append(f"{token} answered as {rid} but not committed there")
    for token, rids in holders.items():
        if len(rids) > 1:
            found.duplicated += len(rids) - 1
            found.problems.append(f"{token} committed by {', '.join(rids)}")
    found.committed_unanswered = sum(1 for t in holders if t not in answered)


def _ids(
    found: Checked, repo: Repository, seqs: set[int], discarded: set[str], unsaved: set[str]
) -> None:
    found.highest_id = repo.next_request_seq() - 1  # handed out, committed or not
    found.gaps = [f"r{s}" for s in range(1, found.highest_id + 1) if s not in seqs]
    found.gaps_discarded = sum(1 for g in found.gaps if g in discarded)
    found.gaps_killed_before_first_draft = sum(
        1 for g in found.gaps if g in unsaved and g not in discarded
    )
    found.unexplained_gaps = [g for g in found.gaps if g not in discarded | unsaved]
    if found.unexplained_gaps:
        found.problems.append(f"ids neither committed nor discarded: {found.unexplained_gaps}")


def _guards(
    found: Checked,
    repo: Repository,
    bundles: list[Any],
    superseder: dict[str, str],
    logged: dict[str, dict[str, Any]],
) -> None:
    @cache
    def committed_after(counter: int) -> frozenset[str]:
        return frozenset(entry.id for entry, _ in repo.run(repo.ops.index_since(counter)))

    for bundle in bundles:
        for decision in bundle.decisions:
            stale = "superseded" in decision.reason.lower()
            if decision.approved:
                found.guard_approved += 1
            elif stale:
                found.guard_denied_stale += 1
            else:
                found.guard_denied_other += 1
                reasons = found.guard_denied_other_reasons
                reasons[decision.reason[:100]] = reasons.get(decision.reason[:100], 0) + 1
                continue  # refused by a rule that does not depend on others' commits
            log = logged.get(decision.request_id)
            if log is None:
                found.guard_unlogged += 1
                continue
            newer = {superseder[c] for c in decision.cites if c in superseder}
            bad = _judged(decision, newer, log, committed_after)
            if bad:
                found.guard_inconsistent += 1
                found.problems.append(bad)


def _judged(
    decision: Any, newer: set[str], log: dict[str, Any], committed_after: Any
) -> str | None:
    """Why the decision contradicts what was committed around it; None when it does not."""
    if decision.approved:  # nothing that superseded a cite may have committed before the guard
        early = newer - committed_after(log["before"])
        return f"{decision.id} approved though {sorted(early)} had committed" if early else None
    if newer - committed_after(log["after"]):  # a supersession committed by the guard's end
        return None
    return (
        f"{decision.id} denied as stale ({decision.reason[:120]}) though no supersession of "
        "its cites had committed"
    )
