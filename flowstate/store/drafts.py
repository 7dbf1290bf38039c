"""Keeping forgotten content out of drafts.

A draft is the serialized Active State of an interrupted or running request. Past states and
observations it opened are copied into it (`revealed`, `opened_observations`), and requests it
opened keep their text and state lines (`request_texts`, `opened_requests`). When those are
forgotten or expired, the copies must go too, or the draft would keep what the user asked to
delete:

    >>> payload = '{"revealed": {"r1.a": {}, "r2.b": {}}, "pending_access": ["r1.a"]}'
    >>> scrub(payload, lambda i: i == "r1.a")
    '{"revealed": {"r2.b": {}}, "pending_access": []}'

The payload is handled as plain JSON (not as an ActiveState), so a draft written by another
version of FlowState is scrubbed as well as it can be, never refused. `scrub_all` does it to
every draft of a namespace, inside the transaction that deleted the records.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from flowstate.models import ids
from flowstate.store.catalog import Q
from flowstate.store.plans import Stmt, TxWork

Gone = Callable[[str], bool]


def scrub_all(namespace: str, gone: Gone, how: str = "removed") -> TxWork[None]:
    """Inside a write transaction: rewrite each draft of `namespace` that copied what `gone`
    names (`how` it went: forgotten or expired)."""
    for row in (yield Stmt(Q.DRAFTS, {"namespace": namespace})):
        scrubbed = scrub(row["payload"], gone, how)
        if scrubbed is not None:
            params = {"request_id": row["request_id"], "payload": scrubbed}
            yield Stmt(Q.SCRUB_DRAFT, {"namespace": namespace, **params})


def of_request(request_id: str) -> Gone:
    """Everything a forgotten request took with it: its own id and every `rN.` id."""
    prefix = f"{request_id}."
    return lambda i: i == request_id or i.startswith(prefix)


def of_ids(gone_ids: set[str]) -> Gone:
    return gone_ids.__contains__


def forgotten_ids(record_id: str) -> Gone:
    """What forgetting `record_id` (a request, or one state) took with it."""
    return of_request(record_id) if ids.is_request_id(record_id) else of_ids({record_id})


def copied_ids(payload: str) -> tuple[list[str], list[str], list[str]]:
    """The past state ids, observation ids and request ids whose content the draft holds (an
    opened request keeps its text even when it has no state left to list)."""
    data = _load(payload)
    if data is None:
        return [], [], []
    states = set(_keys(data, "revealed"))
    observations = set(_keys(data, "opened_observations"))
    for lines in _dict(data, "opened_requests").values():
        states.update(line["id"] for line in _list(lines) if isinstance(line.get("id"), str))
    requests = {*_keys(data, "opened_requests"), *_keys(data, "request_texts")}
    return sorted(states), sorted(observations), sorted(requests)


def scrub(payload: str, gone: Gone, how: str = "removed") -> str | None:
    """The payload without what `gone` names; None when nothing in it was gone. A superseder
    that is gone, of a copy or a line that stays, keeps its id, marked `how` it went (never
    its content): a state a removed one superseded stays stale, as in the store
    (`flowstate.store.forgetting`)."""
    data = _load(payload)
    if data is None:
        return None
    changed = False
    for field in ("revealed", "opened_observations", "request_texts"):
        kept = {k: v for k, v in _dict(data, field).items() if not gone(k)}
        if len(kept) != len(_dict(data, field)):
            data[field], changed = kept, True
    opened = _dict(data, "opened_requests")
    listed: dict[str, Any] = {}
    for rid, lines in opened.items():
        if gone(rid):
            continue
        kept_lines = [x for x in _list(lines) if not gone(str(x.get("id", "")))]
        for line in kept_lines:
            if gone(str(line.get("superseded_by", ""))) and not line.get("superseder_removed"):
                line["superseder_removed"], changed = how, True
        listed[rid] = kept_lines
        changed |= len(kept_lines) != len(_list(lines))
    if len(listed) != len(opened):
        changed = True
    if opened:
        data["opened_requests"] = listed
    for rev in _dict(data, "revealed").values():  # relation ends that were forgotten
        relations = rev.get("relations") if isinstance(rev, dict) else None
        if isinstance(relations, list):
            kept_rel = [r for r in relations if _superseder(r) or not gone(str(r.get("other")))]
            for rel in _list(kept_rel):
                if gone(str(rel.get("other"))) and not rel.get("removed"):
                    rel["removed"], changed = how, True
            if len(kept_rel) != len(relations):
                rev["relations"], changed = kept_rel, True
    for field in ("pending_access", "found"):
        listed_ids = data.get(field)
        if isinstance(listed_ids, list) and any(gone(str(i)) for i in listed_ids):
            data[field] = [i for i in listed_ids if not gone(str(i))]
            changed = True
    return json.dumps(data, ensure_ascii=False, separators=(", ", ": ")) if changed else None


def _superseder(relation: object) -> bool:
    """An incoming SUPERSEDES of a revealed copy: it says the copy is stale."""
    return (
        isinstance(relation, dict)
        and relation.get("type") == "SUPERSEDES"
        and relation.get("direction") == "in"
    )


def _load(payload: str) -> dict[str, Any] | None:
    try:
        data = json.loads(payload)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _dict(data: dict[str, Any], field: str) -> dict[str, Any]:
    value = data.get(field)
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[dict[str, Any]]:
    return [x for x in value if isinstance(x, dict)] if isinstance(value, list) else []


def _keys(data: dict[str, Any], field: str) -> list[str]:
    return [k for k in _dict(data, field) if isinstance(k, str)]


def field_of(payload: str, field: str) -> Any:
    """One top-level field of a draft's payload (None when absent or unreadable)."""
    data = _load(payload)
    return None if data is None else data.get(field)
