"""Small builders for engine tests: scripted step outputs and agents over a test namespace."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from flowstate import AgentConfig, AsyncFlowState, FlowState, ScriptedModel
from flowstate.engine.agent import Agent
from flowstate.engine.async_agent import AsyncAgent
from flowstate.store import AsyncStore, Store

T = TypeVar("T")
# Makes a test state's content longer than an index line shows (INLINE_CONTENT_CHARS): reading
# it takes a reveal, as for most real states.
LONG_TAIL = ", with all the detail a later request may need"
_SCRIPTS = itertools.count(1)


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
        "content": content or f"content of {key}{LONG_TAIL}",
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


@dataclass(frozen=True)
class Shell:
    """Which agent shell a test drives. The async one brings its event loop and the
    `AsyncStore` opened on it (see the `shell` fixture)."""

    name: str
    loop: asyncio.AbstractEventLoop | None = None
    store: AsyncStore | None = None

    @property
    def is_async(self) -> bool:
        return self.loop is not None

    def wait(self, work: Coroutine[Any, Any, T]) -> T:
        assert self.loop is not None
        return self.loop.run_until_complete(work)


SYNC = Shell("sync")


class ShellAgent:
    """An agent driven through one of its two shells: `run`, `resume`, `discard` and
    `pending` go to an `Agent`, or to an `AsyncAgent`'s `arun` / `aresume` / `adiscard` /
    `apending`; everything else is the agent's own. The engine tests take the shell as a
    parameter, so both shells pass the same behavioural tests."""

    def __init__(self, agent: Agent | AsyncAgent, shell: Shell) -> None:
        object.__setattr__(self, "_agent", agent)
        object.__setattr__(self, "_shell", shell)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._agent, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._agent, name, value)

    def _call(self, name: str, *args: Any) -> Any:
        if self._shell.is_async:
            return self._shell.wait(getattr(self._agent, f"a{name}")(*args))
        return getattr(self._agent, name)(*args)

    def run(self, text: str) -> Any:
        return self._call("run", text)

    def resume(self, request_id: str | None = None) -> Any:
        return self._call("resume", request_id)

    def discard(self, request_id: str | None = None) -> str:
        return self._call("discard", request_id)

    def pending(self) -> list[Any]:
        return self._call("pending")

    def refresh_index(self) -> None:
        """Load (or bring up to date) the index, as a request's start does."""
        loading = self._agent.refresh_index()
        if self._shell.is_async:
            self._shell.wait(loading)


class Harness:
    """One FlowState namespace plus scripted agents, each script named uniquely, driven
    through the sync or the async shell."""

    def __init__(
        self, store: Store, namespace: str, shell: Shell = SYNC, *, read_only: bool = False
    ) -> None:
        self.fs = FlowState(store, namespace, read_only=read_only)
        self.afs = (
            AsyncFlowState(shell.store, namespace, read_only=read_only)
            if shell.store is not None
            else None
        )
        self.namespace = namespace
        self.shell = shell

    def agent(
        self, outputs: Sequence[Any] | Callable, tools: Sequence[Any] = (), **config: Any
    ) -> tuple[Any, ScriptedModel]:
        # Unique across harnesses too: several may share a namespace, a name one script.
        name = f"{self.namespace}-{next(_SCRIPTS)}"
        model = (
            ScriptedModel.policy(name, outputs)
            if callable(outputs)
            else ScriptedModel.sequence(name, outputs)
        )
        return self.wrap(model.client(), tools=tools, config=AgentConfig(**config)), model

    def wrap(self, model: Any, **options: Any) -> ShellAgent:
        """An agent of this harness's shell over `model` (`fs.agent` / `await afs.agent`)."""
        if self.afs is None:
            return ShellAgent(self.fs.agent(model, **options), self.shell)
        return ShellAgent(self.shell.wait(self.afs.agent(model, **options)), self.shell)

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


# A past fact that concurrent requests supersede, and the newer fact each writes.
BUDGET = add("budget", "constraint", "Hotel budget 150 EUR a night", "At most 150 EUR")


def lowered(amount: int, target: str) -> dict[str, Any]:
    return add(
        "budget",
        "constraint",
        f"Hotel budget {amount} EUR a night",
        f"At most {amount} EUR",
        relations=[{"type": "SUPERSEDES", "target": target}],
    )
