"""A seeded long-horizon scenario: a project assistant whose every request needs earlier facts.

Request i reads one ticket (a tool call whose result holds two new facts among filler) and
asks about one or two facts settled 1 to 4 requests earlier (`reach`; with `reach=None`, any
earlier request: the far-back variant, where a window of recent turns cannot hold them).
Every fact's value is a unique token such as `WIN-007A-QX4P`, so recall is a substring check.
Requests 1..D of one scenario form the session of depth D, so all depths share their
beginnings.

>>> s = scenario(12, seed=7)
>>> len(s), s[5].seq, all(1 <= s[5].seq - n.seq <= 4 for n in s[5].needs)
(12, 6, True)
"""

from __future__ import annotations

import json
import random
import string
from dataclasses import dataclass

SERVICES = [
    "billing-api",
    "search-indexer",
    "auth-gateway",
    "payments-ledger",
    "notification-hub",
    "report-builder",
    "user-profile",
    "media-transcoder",
    "fraud-scorer",
    "inventory-sync",
    "pricing-engine",
    "audit-trail",
    "export-worker",
    "feature-store",
    "chat-relay",
    "geo-router",
    "mail-sender",
    "ledger-reconciler",
    "session-cache",
    "webhook-dispatcher",
]
ATTRIBUTES = {
    "deploy_window": ("deploy window", "WIN"),
    "owner": ("on-call owner", "OWN"),
    "latency_budget": ("p99 latency budget", "LAT"),
    "freeze_date": ("code freeze date", "FRZ"),
    "rollout_flag": ("rollout feature flag", "FLG"),
    "backup_region": ("backup region", "BKP"),
    "rate_quota": ("rate quota", "QTA"),
    "db_version": ("database version pin", "DBV"),
    "cost_center": ("cost center", "CST"),
    "retention": ("log retention policy", "RET"),
}
_FILLER = [
    "The team discussed the migration plan at length and agreed to revisit staging first.",
    "Several comments point at flaky integration tests that are unrelated to this ticket.",
    "A vendor call is scheduled for next week; nothing here depends on its outcome.",
    "Metrics dashboards were updated and the alert thresholds were reviewed by the SRE group.",
    "The security review found no blocking issues; two minor findings were filed separately.",
    "Product asked for a short summary to include in the monthly stakeholder update.",
    "Capacity looks fine for the quarter according to the last load test report.",
    "Documentation of the runbook was refreshed and linked from the service catalogue.",
]


@dataclass(frozen=True)
class Fact:
    seq: int  # the request that established it
    key: str  # the FlowState state key, e.g. deploy_window_billing_api
    service: str
    attribute: str  # human words: "deploy window"
    value: str  # the unique token recall looks for

    @property
    def sentence(self) -> str:
        return f"The {self.attribute} for {self.service} is {self.value}."

    @property
    def state_id(self) -> str:
        return f"r{self.seq}.{self.key}"


@dataclass(frozen=True)
class Turn:
    seq: int
    ticket: str
    text: str  # what the user asks
    tool_output: str  # what lookup_ticket returns: the new facts among filler
    facts: tuple[Fact, ...]  # introduced by this request
    needs: tuple[Fact, ...]  # earlier facts the answer depends on

    @property
    def answer(self) -> str:
        known = " ".join(f.sentence for f in self.needs)
        new = "; ".join(f"{f.attribute} for {f.service}" for f in self.facts)
        return f"Recorded {self.ticket} ({new}). {known}".strip()


def _token(code: str, n: int, rng: random.Random) -> str:
    tail = "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(4))
    return f"{code}-{n:03d}{rng.choice('ABCDEFGH')}-{tail}"


def _facts(seq: int, pairs: list[tuple[str, str]], rng: random.Random) -> tuple[Fact, ...]:
    out: list[Fact] = []
    for service, attr in pairs:
        words, code = ATTRIBUTES[attr]
        key = f"{attr}_{service.replace('-', '_')}"
        out.append(Fact(seq, key, service, words, _token(code, len(out) + 2 * seq, rng)))
    return tuple(out)


def _tool_output(ticket: str, facts: tuple[Fact, ...], rng: random.Random) -> str:
    comments = rng.sample(_FILLER, 6)
    body = {
        "ticket": ticket,
        "status": rng.choice(["open", "in review", "resolved"]),
        "reporter": rng.choice(["dana", "li", "omar", "sam", "ines"]),
        "description": " ".join(comments[:3]),
        "decisions": [f.sentence for f in facts],
        "comments": [{"by": rng.choice(["ops", "pm", "dev"]), "text": c} for c in comments[3:]],
    }
    return json.dumps(body, ensure_ascii=False)


def _question(needs: tuple[Fact, ...]) -> str:
    asks = " and ".join(f"the {f.attribute} we settled for {f.service}" for f in needs)
    return f"Before I reply to the team, remind me of {asks}." if needs else ""


def scenario(
    depth: int, seed: int = 0, facts_per_request: int = 2, reach: int | None = 4
) -> list[Turn]:
    rng = random.Random(f"scenario:{seed}")
    pairs = [(s, a) for s in SERVICES for a in ATTRIBUTES]
    rng.shuffle(pairs)  # each (service, attribute) is settled once, so no fact goes stale
    if depth * facts_per_request > len(pairs):
        raise ValueError(f"depth {depth} needs more than {len(pairs)} distinct facts")
    turns: list[Turn] = []
    for seq in range(1, depth + 1):
        facts = _facts(seq, pairs[:facts_per_request], rng)
        pairs = pairs[facts_per_request:]
        earlier = [f for t in (turns[-reach:] if reach else turns) for f in t.facts]
        needs = tuple(sorted(rng.sample(earlier, min(len(earlier), rng.choice([1, 2]))),
                             key=lambda f: (f.seq, f.key)))  # fmt: skip
        ticket = f"ATL-{100 + seq}"
        text = (
            f"Ticket {ticket} just came in; read it and record what it settles. {_question(needs)}"
        )
        turns.append(
            Turn(seq, ticket, text.strip(), _tool_output(ticket, facts, rng), facts, needs)
        )
    return turns
