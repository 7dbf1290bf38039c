"""Hypothesis strategies for what a model might reply: noise, JSON, and near-valid steps.

Most replies are step objects close to the schema, because only those reach the rules; in
them every slot is usually plausible and sometimes wrong or hostile (Cypher injection,
backticks, `$(x)`, RTL and zero-width marks, an escaped lone surrogate, 20,000 characters,
unknown fields, tools and categories). The rest is random text and random JSON, which the
parser must refuse with a message.

    conversations().example()   # ['{"delta": [{"op": "add", "key": "note", ...}]}', ...]
"""

from __future__ import annotations

import json

from hypothesis import strategies as st

from flowstate.models import Category, RelationType
from flowstate_bench.fuzz_world import (
    PAST_OBSERVATION_IDS,
    PAST_STATE_IDS,
    REQUEST_ID,
    TOOL_NAMES,
    rendered_index,
)

# Stored inert when they land in a summary (one line each).
INERT = (
    '"}) DETACH DELETE n //',
    "x`}) MATCH (n) DETACH DELETE n //",
    "`backtick`",
    "$(x)",
    "$(row.label)",
    "' OR 1=1 --",
    "State:Request",
    "{namespace: 'other'}",
    "\u202eRTL override\u202c",
    "zero\u200bwidth\u200d\ufeff",
    "e\u0301 \U0001f9ed \u05d0",
)
# Refused wherever they land in a summary; some are fine as content.
HOSTILE = (
    *INERT,
    "\ud800 lone surrogate",
    "line\nbreak",
    "sep\u2028line",
    "nul\x00byte",
    "",
    "   ",
    "x" * 20_000,
)
OWN_KEYS = ("note", "budget", "plan", "hotel_choice", "x1")
BAD_KEYS = ("Bad Key", "o1", "a1", "1abc", "r1.city", f"{REQUEST_ID}.note", "k" * 65, "ключ")
OWN_OBSERVATIONS = (f"{REQUEST_ID}.o1", f"{REQUEST_ID}.o2")
ODD_IDS = ("r1", "r2", "r3", REQUEST_ID, f"{REQUEST_ID}.note", "r9.ghost", "r0.city", "ns.r1.city")


def weighted(*pairs: tuple[int, st.SearchStrategy]) -> st.SearchStrategy:
    """one_of with integer weights. (one_of itself picks branches evenly, and a branch repeated
    in it still counts once.)"""
    return st.sampled_from([s for n, s in pairs for _ in range(n)]).flatmap(lambda s: s)


def plain() -> st.SearchStrategy[str]:
    chars = st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp"))
    return st.text(chars, min_size=1, max_size=40).filter(str.strip)


def texts() -> st.SearchStrategy[str]:
    return weighted((1, st.text(max_size=30)), (1, st.sampled_from(HOSTILE)), (1, plain()))


def summaries() -> st.SearchStrategy[str]:
    return weighted((12, plain()), (3, st.sampled_from(INERT)), (1, st.sampled_from(HOSTILE)))


def contents() -> st.SearchStrategy[str]:
    return weighted((12, plain()), (2, st.sampled_from(HOSTILE)), (1, st.text(max_size=300)))


def keys() -> st.SearchStrategy[str]:
    return weighted(
        (20, st.sampled_from(OWN_KEYS)),
        (1, st.sampled_from(BAD_KEYS)),
        (1, st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)),
        (1, texts()),
    )


def targets() -> st.SearchStrategy[str]:
    listed = sorted(rendered_index().state_ids)  # visible from the first step
    return weighted(
        (6, st.sampled_from(listed)),
        (2, st.sampled_from(PAST_STATE_IDS)),
        (2, st.sampled_from(OWN_KEYS)),
        (1, st.sampled_from(ODD_IDS + PAST_OBSERVATION_IDS)),
        (1, texts()),
    )


def access_ids() -> st.SearchStrategy[str]:
    return weighted(
        (4, st.sampled_from(PAST_STATE_IDS)),
        (2, st.sampled_from(("r1", "r2", *PAST_OBSERVATION_IDS))),
        (1, st.sampled_from(ODD_IDS)),
        (1, texts()),
    )


def json_values() -> st.SearchStrategy[object]:
    leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), texts())
    return st.recursive(
        leaves,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts(), inner, max_size=4),
        max_leaves=12,
    )


def _with_extra(base: st.SearchStrategy[dict]) -> st.SearchStrategy[dict]:
    """An unknown field (the schema forbids them), often with a hostile name."""
    name = st.sampled_from(["extra", "$(x)", "`k`", "namespace", "\u202ename"])
    return st.tuples(base, name, texts()).map(lambda p: {**p[0], p[1]: p[2]})


def _sometimes_extra(base: st.SearchStrategy[dict]) -> st.SearchStrategy[dict]:
    return weighted((15, base), (1, _with_extra(base)))


def relations() -> st.SearchStrategy[dict]:
    kind = weighted((12, st.sampled_from([t.value for t in RelationType])), (1, texts()))
    return _sometimes_extra(st.fixed_dictionaries({"type": kind, "target": targets()}))


def ops() -> st.SearchStrategy[dict]:
    category = weighted((20, st.sampled_from([c.value for c in Category])), (1, texts()))
    one = weighted((3, st.sampled_from(OWN_OBSERVATIONS)), (1, access_ids()))
    evidence = st.lists(one, min_size=1, max_size=2)
    fields = {"op": st.just("add"), "key": keys(), "category": category,
              "summary": summaries(), "content": contents()}  # fmt: skip
    add = weighted(
        (4, st.fixed_dictionaries(fields)),
        (2, st.fixed_dictionaries({**fields, "relations": st.lists(relations(), max_size=2)})),
        (2, st.fixed_dictionaries({**fields, "evidence": evidence})),
    )
    update = st.fixed_dictionaries(
        {"op": st.just("update"), "key": keys()},
        optional={"summary": summaries(), "content": contents()},
    )
    remove = st.fixed_dictionaries({"op": st.just("remove"), "key": keys()})
    odd = st.fixed_dictionaries({"op": texts(), "key": keys()})
    return weighted((12, _sometimes_extra(add)), (3, update), (2, remove), (1, odd))


def arguments() -> st.SearchStrategy[dict]:
    return weighted(
        (3, st.fixed_dictionaries({"text": contents()})),
        (2, st.fixed_dictionaries({"a": st.integers(), "b": st.integers()})),
        (2, st.fixed_dictionaries({"item": summaries()})),
        (1, st.dictionaries(texts(), json_values(), max_size=3)),
    )


def actions() -> st.SearchStrategy[object]:
    cites = st.lists(weighted((3, st.sampled_from(PAST_STATE_IDS)), (1, targets())), max_size=3)
    tool = st.fixed_dictionaries(
        {"type": st.just("tool"),
         "name": weighted((6, st.sampled_from(TOOL_NAMES)), (1, texts())),
         "arguments": arguments()},
        optional={"cites": cites},
    )  # fmt: skip
    final = st.fixed_dictionaries(
        {"type": st.just("final"), "answer": texts()}, optional={"summary": summaries()}
    )
    junk = st.fixed_dictionaries({"type": texts()})
    return weighted((3, st.none()), (5, _sometimes_extra(tool)), (1, final), (1, junk))


def steps() -> st.SearchStrategy[dict]:
    """Step objects near the schema: right fields, values anywhere from valid to hostile."""
    base = st.fixed_dictionaries(
        {},
        optional={"delta": st.lists(ops(), min_size=1, max_size=3),
                  "access": st.lists(access_ids(), max_size=3), "action": actions()},
    )  # fmt: skip
    return _sometimes_extra(base)


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _as_text(value: object, wrap: str, cut: float | None) -> str:
    # Providers send UTF-8, so a lone surrogate can only arrive escaped, as in JSON "\ud800".
    body = json.dumps(value, ensure_ascii=False)
    if not _utf8(body):
        body = json.dumps(value)
    if cut is not None:
        body = body[: int(len(body) * cut)]
    return wrap.replace("BODY", body)


def reply_texts() -> st.SearchStrategy[str]:
    """One model reply as text."""
    wraps = weighted((4, st.just("BODY")), (1, st.just("```json\nBODY\n```")),
                     (1, st.just("Sure, here it is: BODY thanks")))  # fmt: skip
    cut = weighted((9, st.none()), (1, st.floats(0.0, 1.0)))
    structured = st.builds(_as_text, weighted((8, steps()), (1, json_values())), wraps, cut)
    return weighted((8, structured), (1, texts().filter(_utf8)))


def _echo(text: str) -> str:
    return _as_text({"action": {"type": "tool", "name": "echo", "arguments": {"text": text}}},
                    "BODY", None)  # fmt: skip


def conversations(max_replies: int = 5) -> st.SearchStrategy[list[str]]:
    """The replies of one request, in order; some start with a valid tool call, so that later
    steps have an observation to cite."""
    replies = st.lists(reply_texts(), min_size=1, max_size=max_replies)
    echoed = st.tuples(contents().map(_echo), replies).map(lambda p: [p[0], *p[1]])
    return weighted((3, replies), (1, echoed))
