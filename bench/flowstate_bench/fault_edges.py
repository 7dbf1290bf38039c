"""The engine's edges at bench scale: hostile tool outputs, deep and oversized model replies,
past states forgotten by another process before the commit, a process killed at the final
commit. Each part counts what it tried and lists what broke; the lists must stay empty.

Run as a module (`python -m flowstate_bench.fault_edges URI NAMESPACE`) it is the child
process that dies as its final commit starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from flowstate.api import FlowState
from flowstate.async_api import AsyncFlowState
from flowstate.engine.step import AgentConfig
from flowstate.engine.tools import MAX_OUTPUT_CHARS, Tool
from flowstate.errors import RequestInterrupted
from flowstate.llm.parsing import parse_step
from flowstate.llm.scripted import ScriptedFailure, ScriptedModel, unregister
from flowstate.models import Category, Outcome, StepOutput
from flowstate.models.active import ActiveState
from flowstate.models.records import is_unicode, utcnow
from flowstate.settings import Neo4jSettings
from flowstate.store import Repository, Store
from flowstate.store.ops import Ops

_WORKER_EXIT = 17


def _namespace(part: str) -> str:
    return f"bench_edges_{part}_{uuid.uuid4().hex[:8]}"


def _add(key: str, **extra: Any) -> dict[str, Any]:
    return {"op": "add", "key": key, "category": "environment", "summary": f"{key} noted",
            "content": f"{key} in detail", **extra}  # fmt: skip


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool", "name": name, "arguments": arguments}


def _final(answer: str = "done") -> dict[str, Any]:
    return {"action": {"type": "final", "answer": answer, "summary": answer}}


def _nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def hostile_tool_set() -> list[Tool]:
    """Tools that return or raise what a careless or hostile tool might (also used by tests)."""

    def surrogate() -> str:
        """Bytes decoded with surrogateescape."""
        return b"caf\xe9 \xff\xfe".decode("utf-8", "surrogateescape")

    def loud() -> str:
        """Fails with a 250,000-character message."""
        raise ValueError("e" * 250_000)

    def lookup(city: str) -> str:
        """Look a city up."""
        return city

    def deep() -> Any:
        """A result nested 3,000 deep."""
        return _nested(3_000)

    def huge() -> str:
        """A 300,000-character result."""
        return "z" * 300_000

    async def later(city: str) -> str:
        """An async tool."""
        await asyncio.sleep(0)
        return f"{city} \udcff later"

    return [Tool.from_function(f) for f in (surrogate, loud, lookup, deep, huge, later)]


HOSTILE_CALLS = [
    _call("surrogate"),
    _call("loud"),
    {"type": "tool", "name": "lookup", "arguments": {"city": "Porto", "n" * 15_000: 1}},
    _call("deep"),
    _call("huge"),
]


def hostile_tools(store: Store, rounds: int = 1) -> dict:
    """Each round: one request (sync, then async with an async tool) calls every hostile tool,
    then the model fails; a fresh agent resumes from the draft and commits."""
    out: dict[str, Any] = {"tool_outputs": 0, "bounded_observations": 0, "false_interruptions": 0,
           "requests_resumed": 0, "problems": []}  # fmt: skip
    for i in range(rounds * 2):
        run_async = i % 2 == 1
        calls = [*HOSTILE_CALLS, *([_call("later", city="Porto")] if run_async else [])]
        script: list[Any] = [{"action": c, "delta": [_add(f"s{n}", evidence=[f"r1.o{n}"])]
                              if n else []} for n, c in enumerate(calls)]  # fmt: skip
        script += [{"delta": [_add("last", evidence=[f"r1.o{len(calls)}"])]}]
        script += [ScriptedFailure(400, "the model went away")]
        repo = Repository(store, _namespace("tools"))
        tools = [t for t in hostile_tool_set() if run_async or not t.is_async]
        try:
            first = ScriptedModel.sequence(f"{repo.namespace}-1", script)
            try:
                if run_async:
                    asyncio.run(_arun(store.settings, repo.namespace, first, tools, "hostile"))
                else:
                    FlowState(store, repo.namespace).agent(first.client(), tools).run("hostile")
                out["problems"].append("the request ended although the model failed")
            except RequestInterrupted:
                pass
            again = ScriptedModel.sequence(f"{repo.namespace}-2", [_final()])
            result = FlowState(store, repo.namespace).agent(again.client(), tools).resume()
            out["requests_resumed"] += result.outcome is Outcome.ANSWERED
            resumed = again.calls[0].messages[-1]["content"]
            out["false_interruptions"] += resumed.count("was interrupted")
            out["tool_outputs"] += len(calls)
            for obs in repo.bundles()[0].observations:
                ok = len(obs.output) <= MAX_OUTPUT_CHARS + 100 and is_unicode(obs.output)
                out["bounded_observations"] += ok
                if not ok:
                    out["problems"].append(f"{obs.tool}: unbounded or invalid observation")
        except Exception as e:  # a crash is what this part looks for: count it
            out["problems"].append(f"hostile tools ({'arun' if run_async else 'run'}): {e!r}")
        finally:
            _cleanup(repo, f"{repo.namespace}-1", f"{repo.namespace}-2")
    return out


async def _arun(
    settings: Neo4jSettings, namespace: str, model: ScriptedModel, tools: list[Tool], text: str
) -> None:
    """One request through the async front door (the async driver end to end)."""
    async with await AsyncFlowState.connect(namespace=namespace, settings=settings) as fs:
        await (await fs.agent(model.client(), tools)).arun(text)


def _deep_replies() -> list[str]:
    replies = []
    for depth in (sys.getrecursionlimit() + 10, 5_000, 50_000):
        replies.append('{"action": ' + "[" * depth + "]" * depth + "}")
        replies.append('{"a":' * depth + "1" + "}" * depth)
    for depth in (33, 200, 230, 260):  # tool arguments just past the bound, and far past it
        args = {"x": _nested(depth)}
        replies.append('{"action": {"type": "tool", "name": "lookup", "arguments": '
                       + str(args).replace("'", '"') + "}}")  # fmt: skip
    replies.append('{"action": {"type": "final", "answer": "' + "a" * 600_000 + '"}}')
    return replies


def deep_replies(store: Store) -> dict:
    """Replies nested past Python's recursion limit, deep tool arguments and an oversized
    reply: through the parser, then all of them in one request on Neo4j."""
    replies = _deep_replies()
    out: dict[str, Any] = {"replies": len(replies), "refused_with_reason": 0, "escaped": 0,
           "drafts_reloaded": 0, "problems": []}  # fmt: skip
    for text in replies:
        try:
            parsed = parse_step(text, StepOutput)
        except BaseException as e:  # noqa: BLE001 - RecursionError is what used to escape
            out["escaped"] += 1
            out["problems"].append(f"parser raised {type(e).__name__}")
            continue
        out["refused_with_reason"] += parsed.value is None and bool(parsed.error)
    repo = Repository(store, _namespace("replies"))
    name = f"{repo.namespace}-deep"
    try:
        # one reply per step, each checked by reloading the saved draft
        script: list[Any] = [*replies, _final()]
        model = ScriptedModel.sequence(name, script)
        room = AgentConfig(max_steps=len(script) + 1, max_malformed=len(script) + 1)
        agent = FlowState(store, repo.namespace).agent(model.client(), config=room)

        def reload(_active: ActiveState) -> None:
            for draft in repo.open_requests():
                ActiveState.model_validate_json(draft.payload)
                out["drafts_reloaded"] += 1

        agent.on_step = reload
        result = agent.run("deep replies")
        if result.outcome is not Outcome.ANSWERED:
            out["problems"].append(f"the deep-reply request ended {result.outcome.value}")
    except Exception as e:
        out["problems"].append(f"deep replies on Neo4j: {e!r}")
    finally:
        _cleanup(repo, name)
    return out


def _forget_one(other: Repository, round_: int) -> None:
    """Another process forgets, expires or drops what the running request relies on."""
    kind = round_ % 3
    if kind == 0:
        other.forget_state("r1.budget")
    elif kind == 1:
        other.expire(Category.CONSTRAINT, utcnow() + timedelta(seconds=1))
    else:
        other.forget_request("r1")


def dangling_at_commit(store: Store, settings: Neo4jSettings, rounds: int = 3) -> dict:
    """Each round: r2 relates to and cites r1's states; a second connection forgets one of
    them (state, retention, whole request) before r2's final answer. r2 must commit at once,
    saying what it dropped."""
    out: dict[str, Any] = {"rounds": rounds, "committed": 0, "references_dropped": 0, "stuck": 0,
           "problems": []}  # fmt: skip
    with Store.connect(settings) as second:
        for n in range(rounds):
            repo = Repository(store, _namespace("dangling"))
            other = Repository(second, repo.namespace)
            names = [f"{repo.namespace}-{i}" for i in (1, 2)]
            try:
                seed = [{"delta": [_add("budget", category="constraint"),
                                   _add("city", category="constraint")], **_final()}]  # fmt: skip
                seeding = ScriptedModel.sequence(names[0], seed).client()
                FlowState(store, repo.namespace).agent(seeding).run("seed")
                result = _dangling_request(
                    store, repo, names[1], functools.partial(_forget_one, other, n)
                )
                out["committed"] += result.outcome is Outcome.ANSWERED
                out["references_dropped"] += len(result.dropped)
                if not result.dropped or repo.get_request("r2").dropped != result.dropped:
                    out["problems"].append(f"round {n}: the drop was not recorded")
                out["stuck"] += bool(repo.open_requests())
            except Exception as e:
                out["stuck"] += 1
                out["problems"].append(f"dangling round {n}: {e!r}")
            finally:
                _cleanup(repo, *names)
    return out


def _dangling_request(store: Store, repo: Repository, name: str, between: Callable[[], None]):  # noqa: ANN202
    relations = [{"type": "DEPENDS_ON", "target": "r1.budget"},
                 {"type": "DERIVED_FROM", "target": "r1.city"}]  # fmt: skip
    script: list[dict[str, Any]] = [
        {"access": ["r1.budget", "r1.city"]},
        {"delta": [_add("plan", relations=relations)],
         "action": {**_call("book", hotel="Casa Azul"), "cites": ["r1.budget", "r1.city"]}},
    ]  # fmt: skip

    def book(hotel: str) -> str:
        """Book a hotel."""
        return f"booked {hotel}"

    def policy(_messages: object) -> dict:
        n = len(model.calls)
        if n < len(script):
            return script[n]
        between()
        return _final("booked")

    model = ScriptedModel.policy(name, policy)
    agent = FlowState(store, repo.namespace).agent(
        model.client(), [Tool.from_function(book, consequential=True)], approve=lambda _a: True
    )
    return agent.run("book within budget")


def crash_at_final_commit(store: Store, settings: Neo4jSettings, rounds: int = 1) -> dict:
    """Each round: a child process answers and dies (os._exit) as its final commit starts;
    resume() here must commit that answer without a model call."""
    out: dict[str, Any] = {"rounds": rounds, "resumed_without_model_call": 0,
                           "model_calls_repeated": 0, "problems": []}  # fmt: skip
    for n in range(rounds):
        repo = Repository(store, _namespace("crash"))
        name = f"{repo.namespace}-resume"
        try:
            done = subprocess.run(
                [sys.executable, "-m", "flowstate_bench.fault_edges", settings.uri,
                 repo.namespace],
                capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            if done.returncode != _WORKER_EXIT:
                out["problems"].append(f"round {n}: child exited {done.returncode}: "
                                       f"{done.stderr[-300:]}")  # fmt: skip
                continue
            model = ScriptedModel.sequence(name, [])  # any call fails
            result = FlowState(store, repo.namespace).agent(model.client()).resume()
            out["model_calls_repeated"] += len(model.calls)
            states = [s.id for s in repo.bundles()[0].states]
            if result.answer == "kept" and states == ["r1.before", "r1.last"] and not model.calls:
                out["resumed_without_model_call"] += 1
            else:
                out["problems"].append(f"round {n}: resumed to {result.answer!r}, {states}")
        except Exception as e:
            out["problems"].append(f"crash round {n}: {e!r}")
        finally:
            _cleanup(repo, name)
    return out


def edges(store: Store, settings: Neo4jSettings, rounds: int = 1) -> dict:
    """All four parts; `rounds` scales the hostile-tool, dangling and crash parts."""
    return {
        "hostile_tools": hostile_tools(store, rounds),
        "deep_replies": deep_replies(store),
        "dangling_at_commit": dangling_at_commit(store, settings, 3 * rounds),
        "crash_at_final_commit": crash_at_final_commit(store, settings, rounds),
    }


def _cleanup(repo: Repository, *scripts: str) -> None:
    for name in scripts:
        unregister(name)
    with contextlib.suppress(Exception):  # the figures are already taken
        repo.forget_namespace(force=True)


def _crashing_child(uri: str, namespace: str) -> None:
    script = [
        {"delta": [_add("before")], "action": _call("lookup", city="Porto")},
        {"delta": [_add("last", evidence=["r1.o1"])], **_final("kept")},
    ]
    model = ScriptedModel.sequence(f"{namespace}-child", script)

    def lookup(city: str) -> str:
        """Look a city up."""
        return f"{city}: 3 hotels"

    # The commit plan, which the agent runs (whichever shell): the process dies as it starts.
    Ops.commit = lambda self, bundle, **lease: os._exit(_WORKER_EXIT)  # type: ignore[method-assign]
    fs = FlowState.connect(settings=Neo4jSettings(uri=uri), namespace=namespace)
    fs.agent(model.client(), [lookup]).run("plan Porto")
    sys.exit("the request should not have reached its commit")


if __name__ == "__main__":
    _crashing_child(sys.argv[1], sys.argv[2])
