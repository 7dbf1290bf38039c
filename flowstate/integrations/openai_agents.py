"""FlowState in the OpenAI Agents SDK (`pip install 'flowstate-memory[openai-agents]'`).

    memory = FlowStateRunner(fs, consequential={"book_hotel"})
    agent = Agent(name="travel", tools=[search_hotels, book_hotel])
    result = memory.run_sync(agent, "Book us a hotel in Lisbon under our budget")

A run is one FlowState request, begun with the user's text. The SDK has no hook for a failed
run, so `FlowStateRunner` wraps its runner: it commits when `Runner.run` returns, discards
when it raises, and leaves the draft when it is cancelled or the process stops. For each run
it gives the agent and the agents it hands off to (copies: the caller's agents are left as
they are) dynamic `instructions` with
the index, re-read before every model call; the memory tools `memory_reveal`, `memory_record`
and `memory_search` as `FunctionTool`s; each of its function tools kept as an observation in
the tool's own invoke (the `on_tool_end` hook comes after the model's copy of the result is
made, too late for the id the model cites); and on each consequential tool a `cites`
parameter and a tool input guardrail that runs FlowState's guard.
"""

from __future__ import annotations

import contextlib
import inspect
import json
from collections.abc import AsyncIterator, Collection
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from agents import (
    Agent,
    FunctionTool,
    RunContextWrapper,
    Runner,
    RunResult,
    RunResultStreaming,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrail,
    ToolInputGuardrailData,
    ToolOutputFileContent,
    ToolOutputImage,
    ToolOutputText,
)
from agents.tool_context import ToolContext

from flowstate.compact.arguments import Refused
from flowstate.errors import UsageError
from flowstate.integrations import memory as m
from flowstate.integrations.runs import (
    AsyncRun,
    OnBegin,
    Resume,
    Run,
    ThreadedRun,
    async_ended_on_error,
    ended_on_error,
    start_async,
)

if TYPE_CHECKING:
    from flowstate.api import FlowState
    from flowstate.async_api import AsyncFlowState

__all__ = ["FlowStateRunner", "Resume"]

ActiveRun = AsyncRun | ThreadedRun
_OUTPUTS = (ToolOutputText, ToolOutputImage, ToolOutputFileContent)


@dataclass(frozen=True)
class FlowStateRunner:
    """Runs agents with FlowState's memory, in `fs`'s namespace (bound here: nothing the
    model sends names another). `fs` is a `FlowState` (`run_sync`, or `run` with its calls in
    a worker thread) or an `AsyncFlowState` opened on the loop the agent runs on (`run`).

    `consequential`: the names of the tools FlowState's guard must approve before they run.
    `on_begin(request_id, handle)` is told each request as it begins: keep them to resume it
    after a crash (`resuming`)."""

    fs: FlowState | AsyncFlowState
    consequential: Collection[str] = ()
    on_begin: OnBegin | None = None
    resume: Resume | None = field(default=None, repr=False)

    def resuming(self, request_id: str, handle: str) -> FlowStateRunner:
        """This runner for one run that picks up the open request `request_id` (of the client
        holding `handle`) from its draft."""
        return replace(self, resume=Resume(request_id, handle))

    async def run(self, agent: Agent[Any], input: Any, **kwargs: Any) -> RunResult:
        """`Runner.run(agent, input, **kwargs)` as one FlowState request."""
        self._check(agent)
        run = await start_async(self.fs, _user_text(input), self.resume, self.on_begin)
        async with async_ended_on_error(run):
            result = await Runner.run(self._agent(agent, run), input, **kwargs)
        if result.interruptions:  # tools waiting for the caller's approval: the request stays
            return result  # open and held, for the run the caller resumes with the approvals
        await run.commit(m.answer_text(result.final_output))
        return result

    @contextlib.asynccontextmanager
    async def run_streamed(
        self, agent: Agent[Any], input: Any, **kwargs: Any
    ) -> AsyncIterator[RunResultStreaming]:
        """`Runner.run_streamed(agent, input, **kwargs)` as one FlowState request, for an
        `async with` block that reads its events: committed when the block ends with the run
        complete, discarded when the run or the block raises, and left open when the block
        ends before the run does (the run is cancelled, the draft stays to resume).

            async with memory.run_streamed(agent, "Book a hotel") as result:
                async for event in result.stream_events():
                    ...
        """
        self._check(agent)
        run = await start_async(self.fs, _user_text(input), self.resume, self.on_begin)
        result: RunResultStreaming | None = None
        try:
            result = Runner.run_streamed(self._agent(agent, run), input, **kwargs)
            yield result
        except BaseException as e:
            if result is not None and not result.is_complete:
                result.cancel()  # its tasks would go on writing to the request
            await (run.fail() if isinstance(e, Exception) else run.leave())
            raise
        if result.interruptions:
            return
        if not result.is_complete or result.final_output is None:
            result.cancel()  # the block stopped reading: the run stops too
            await run.leave()
            return
        await run.commit(m.answer_text(result.final_output))

    def run_sync(self, agent: Agent[Any], input: Any, **kwargs: Any) -> RunResult:
        """`Runner.run_sync(agent, input, **kwargs)` as one FlowState request (over a
        `FlowState`)."""
        from flowstate.api import FlowState

        if not isinstance(self.fs, FlowState):
            raise UsageError("FlowStateRunner over an AsyncFlowState runs with `await run(...)`")
        self._check(agent)
        run = Run.start(self.fs, _user_text(input), self.resume, self.on_begin)
        with ended_on_error(run):
            result = Runner.run_sync(self._agent(agent, ThreadedRun(run)), input, **kwargs)
        if result.interruptions:
            return result
        run.commit(m.answer_text(result.final_output))
        return result

    # -- the run's agent ----------------------------------------------------------------------

    def _check(self, agent: Agent[Any]) -> None:
        names = {t.name for a in _agents(agent) for t in a.tools if isinstance(t, FunctionTool)}
        missing = sorted(set(self.consequential) - names)
        if missing:  # a misspelt name would leave its tool unguarded
            raise UsageError(f"consequential tools not among the agent's function tools: {missing}")

    def _agent(
        self, agent: Agent[Any], run: ActiveRun, copies: dict[int, Agent[Any]] | None = None
    ) -> Agent[Any]:
        """A copy of `agent` whose tools and instructions are this run's, and so are those of
        the agents it hands off to."""
        copies = {} if copies is None else copies
        if id(agent) in copies:  # agents that hand off to each other
            return copies[id(agent)]
        tools = [
            self._kept(t, run) if isinstance(t, FunctionTool) and t.name not in m.TOOLS else t
            for t in agent.tools
        ]
        own = agent.instructions

        async def instructions(ctx: RunContextWrapper[Any], current: Agent[Any]) -> str:
            before = own(ctx, current) if callable(own) else own
            if inspect.isawaitable(before):
                before = await before
            index = await run.instructions()
            return f"{before}\n\n{index}" if before else index

        memory = [_memory_tool(name, run) for name in m.TOOLS]
        copy = copies[id(agent)] = agent.clone(instructions=instructions, tools=[*tools, *memory])
        copy.handoffs = [
            self._agent(h, run, copies) if isinstance(h, Agent) else h for h in agent.handoffs
        ]
        return copy

    def _kept(self, tool: FunctionTool, run: ActiveRun) -> FunctionTool:
        """`tool` with its result kept as an observation, and guarded when consequential."""
        consequential = tool.name in self.consequential
        invoke = tool.on_invoke_tool

        async def on_invoke_tool(ctx: ToolContext[Any], input: str) -> Any:
            arguments = _arguments(input)
            if consequential:  # the guardrail approved; the tool takes its own arguments
                arguments = m.split_cites(arguments)[0]
                input = json.dumps(arguments)
                ctx._function_tool_arguments = None  # prepared from the input with `cites`
            result = await invoke(ctx, input)
            oid = await run.observe(tool.name, arguments, _output_text(result), False)
            return _with_note(result, oid)

        if not consequential:
            return replace(tool, on_invoke_tool=on_invoke_tool)

        async def guard(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
            try:
                arguments, cites = m.split_cites(_arguments(data.context.tool_arguments))
            except Refused as e:
                return ToolGuardrailFunctionOutput.reject_content(str(e))
            verdict = await run.guard(tool.name, arguments, cites)
            if verdict.approved:
                return ToolGuardrailFunctionOutput.allow()
            return ToolGuardrailFunctionOutput.reject_content(
                m.refused_text(tool.name, verdict.reason)
            )

        guardrail: ToolInputGuardrail[Any] = ToolInputGuardrail(
            guardrail_function=guard, name="flowstate_guard"
        )
        return replace(
            tool,
            on_invoke_tool=on_invoke_tool,
            params_json_schema=m.with_cites(tool.params_json_schema),
            tool_input_guardrails=[*(tool.tool_input_guardrails or []), guardrail],
        )


def _agents(agent: Agent[Any]) -> list[Agent[Any]]:
    """`agent` and the agents it hands off to, directly or not."""
    found: dict[int, Agent[Any]] = {}
    stack = [agent]
    while stack:
        current = stack.pop()
        if id(current) not in found:
            found[id(current)] = current
            stack.extend(h for h in current.handoffs if isinstance(h, Agent))
    return list(found.values())


def _memory_tool(name: str, run: ActiveRun) -> FunctionTool:
    model, description = m.TOOLS[name]

    async def on_invoke_tool(ctx: ToolContext[Any], input: str) -> str:
        try:
            return await run.call(name, input)
        except Refused as e:
            return str(e)

    schema = model.model_json_schema()
    schema.pop("title", None)
    return FunctionTool(
        name=name,
        description=description,
        params_json_schema=schema,
        on_invoke_tool=on_invoke_tool,
        strict_json_schema=False,  # a delta's operations differ in their fields
    )


def _arguments(input: str) -> dict[str, Any]:
    try:
        arguments = json.loads(input or "{}")
    except ValueError:
        raise Refused("arguments must be a JSON object") from None
    if not isinstance(arguments, dict):
        raise Refused("arguments must be a JSON object")
    return arguments


def _output_text(result: Any) -> str:
    if isinstance(result, str):
        return result
    return m.answer_text(result)


def _with_note(result: Any, observation_id: str) -> Any:
    """The tool's result with the id it was kept as: text stays text, the SDK's structured
    outputs get the note as one more text output."""
    if isinstance(result, _OUTPUTS):
        result = [result]
    if isinstance(result, list) and result and all(isinstance(r, _OUTPUTS) for r in result):
        note = m.kept_text("", observation_id).lstrip("\n")
        return [*result, ToolOutputText(text=note)]
    return m.kept_text(_output_text(result), observation_id)


def _user_text(input: Any) -> str:
    """The user's text of a run's input: the text itself, or the last user message's."""
    if isinstance(input, str):
        return input
    if not isinstance(input, list):
        return ""  # a RunState: a paused run, picked up with `resuming`
    for item in reversed(input):
        if isinstance(item, dict) and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return content
            parts = content if isinstance(content, list) else []
            texts = [p.get("text", "") for p in parts if isinstance(p, dict)]
            return "\n".join(t for t in texts if t)
    return ""
