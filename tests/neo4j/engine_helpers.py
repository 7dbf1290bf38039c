"""Small builders for engine tests: scripted step outputs and agents over a test namespace."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from flowstate import AgentConfig, FlowState, ScriptedModel, StoreUnavailable
from flowstate.engine.agent import Agent
from flowstate.store import Store


def add(
    key: str,
    category: str = "environment",
    summary: str | None = None,
    content: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "op": "add",
        "key": key,
        "category": category,
        "summary": summary or f"summary of {key}",
        "content": content or f"content of {key}",
        **extra,
    }


def final(answer: str = "done", summary: str = "") -> dict[str, Any]:
    return {"type": "final", "answer": answer, "summary": summary}


def tool(name: str, /, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool", "name": name, "arguments": arguments}


def step(
    delta: Sequence[dict] = (), access: Sequence[str] = (), action: dict | None = None
) -> dict:
    return {"delta": list(delta), "access": list(access), "action": action}


SHELLS = ("sync", "async")


class ShellAgent:
    """An Agent driven through one of its two shells: `run`, `resume` and `discard` go
    through the sync methods or through `arun` / `aresume` / `adiscard`; everything else is
    the agent's own. The engine tests take the shell as a parameter, so both shells pass the
    same behavioural tests."""

    def __init__(self, agent: Agent, shell: str) -> None:
        object.__setattr__(self, "_agent", agent)
        object.__setattr__(self, "_async", shell == "async")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._agent, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._agent, name, value)

    def run(self, text: str) -> Any:
        return asyncio.run(self._agent.arun(text)) if self._async else self._agent.run(text)

    def resume(self) -> Any:
        return asyncio.run(self._agent.aresume()) if self._async else self._agent.resume()

    def discard(self) -> str | None:
        return asyncio.run(self._agent.adiscard()) if self._async else self._agent.discard()


class Harness:
    """One FlowState namespace plus scripted agents, each script named uniquely, driven
    through the sync or the async shell."""

    def __init__(self, store: Store, namespace: str, shell: str = "sync") -> None:
        self.fs = FlowState(store, namespace)
        self.namespace = namespace
        self.shell = shell
        self._n = 0

    def agent(
        self, outputs: Sequence[Any] | Callable, tools: Sequence[Any] = (), **config: Any
    ) -> tuple[Any, ScriptedModel]:
        self._n += 1
        name = f"{self.namespace}-{self._n}"
        model = (
            ScriptedModel.policy(name, outputs)
            if callable(outputs)
            else ScriptedModel.sequence(name, outputs)
        )
        agent = self.fs.agent(model.client(), tools=tools, config=AgentConfig(**config))
        return ShellAgent(agent, self.shell), model

    def run(
        self,
        outputs: Sequence[Any],
        text: str = "a request",
        tools: Sequence[Any] = (),
        **config: Any,
    ):
        agent, model = self.agent(outputs, tools, **config)
        return agent.run(text), model


def user_prompt(model: ScriptedModel, call: int) -> str:
    """The user message of the model's `call`-th call (0-based)."""
    return model.calls[call].messages[-1]["content"]


def section(prompt: str, title: str) -> str:
    """One `## title` section of the Active State."""
    start = prompt.index(f"## {title}\n")
    rest = prompt[start + len(title) + 4 :]
    ends = [i for i in (rest.find("\n## "), rest.find("\n# ")) if i >= 0]
    return rest[: min(ends)] if ends else rest


def fail_save(agent: Agent, nth: int) -> None:
    """Make the agent's `nth` draft save fail as if Neo4j went away (the first save is the
    request's start; the second precedes its first tool call)."""
    real_save, saves = agent.repo.save_draft, []

    def failing(request_id: str, payload: str, **lease: Any) -> None:
        saves.append(request_id)
        if len(saves) == nth:
            raise StoreUnavailable("Neo4j went away")
        real_save(request_id, payload, **lease)

    agent.repo.save_draft = failing  # type: ignore[method-assign]
