"""FlowState as a pydantic-ai capability (`pip install 'flowstate-memory[pydantic-ai]'`).

    memory = FlowStateCapability(fs, consequential={"book_hotel"})
    agent = Agent(model, tools=[search_hotels, book_hotel], capabilities=[memory])
    agent.run_sync("Book us a hotel in Lisbon under our budget")

A run of the agent is one FlowState request, begun with the user's prompt. The model's
instructions carry the index (brought up to date at every model request); its tools include
`memory_reveal`, `memory_record` and `memory_search`; every function tool's result is kept as
an observation (the model reads the id to cite); a consequential tool takes `cites` and runs
only when FlowState's guard approves. The run commits when it ends, is discarded when it
fails, and leaves its draft when it is cancelled or the process stops: run again with
`memory.resuming(request_id, handle)` to pick it up.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import KW_ONLY, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pydantic_ai import RunContext, Tool, ToolFailed
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ToolCallPart, ToolReturn
from pydantic_ai.tools import DeferredToolRequests, ToolDefinition
from pydantic_ai.toolsets import FunctionToolset
from pydantic_core import to_json

from flowstate.compact.arguments import Refused
from flowstate.errors import UsageError
from flowstate.integrations import memory as m
from flowstate.integrations.runs import (
    AsyncRun,
    OnBegin,
    Resume,
    ThreadedRun,
    async_ended_on_error,
    start_async,
)

if TYPE_CHECKING:
    from pydantic_ai.capabilities.abstract import RawToolArgs, WrapRunHandler
    from pydantic_ai.run import AgentRunResult

    from flowstate.api import FlowState
    from flowstate.async_api import AsyncFlowState

__all__ = ["FlowStateCapability", "Resume"]


@dataclass
class FlowStateCapability(AbstractCapability[Any]):
    """FlowState's memory for every run of an agent, in `fs`'s namespace (bound here: nothing
    the model sends names another). `fs` is a `FlowState` (its calls run in a worker thread)
    or an `AsyncFlowState` opened on the loop the agent runs on.

    `consequential`: the names of the tools FlowState's guard must approve before they run.
    `on_begin(request_id, handle)` is told each request as it begins: keep them to resume it
    after a crash (`resuming`)."""

    fs: FlowState | AsyncFlowState
    _: KW_ONLY
    consequential: Collection[str] = ()
    on_begin: OnBegin | None = None
    resume: Resume | None = None
    id: str | None = "flowstate"
    _run: AsyncRun | ThreadedRun | None = field(default=None, init=False, repr=False)

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # holds a front door: not serializable to an agent spec

    def resuming(self, request_id: str, handle: str) -> FlowStateCapability:
        """This capability for one run that picks up the open request `request_id` (of the
        client holding `handle`) from its draft: pass it as `agent.run(...,
        capabilities=[memory.resuming(request_id, handle)])`."""
        return replace(self, resume=Resume(request_id, handle))

    async def for_run(self, ctx: RunContext[Any]) -> FlowStateCapability:
        return replace(self)  # the run's request is this run's own

    # -- the run: begin, then commit, discard or leave -----------------------------------------

    async def wrap_run(
        self, ctx: RunContext[Any], *, handler: WrapRunHandler
    ) -> AgentRunResult[Any]:
        self._run = run = await start_async(
            self.fs, _prompt_text(ctx.prompt), self.resume, self.on_begin
        )
        async with async_ended_on_error(run):
            result = await handler()
        if isinstance(result.output, DeferredToolRequests):  # paused for the caller's approval
            await run.leave()  # resumed with `resuming(...)` and the deferred results
            return result
        await run.commit(m.answer_text(result.output))
        return result

    def get_instructions(self) -> Any:
        async def index(ctx: RunContext[Any]) -> str:
            return await self._active().instructions()

        return index

    def get_toolset(self) -> FunctionToolset[Any]:
        return FunctionToolset([self._memory_tool(name) for name in m.TOOLS])

    # -- tool calls -------------------------------------------------------------------------------

    async def prepare_tools(
        self, ctx: RunContext[Any], tool_defs: list[ToolDefinition]
    ) -> list[ToolDefinition]:
        names = {t.name for t in tool_defs}
        missing = sorted(set(self.consequential) - names)
        if missing:  # a misspelt name would leave its tool unguarded
            raise UsageError(f"consequential tools not among the agent's tools: {missing}")
        return [
            replace(t, parameters_json_schema=m.with_cites(t.parameters_json_schema))
            if t.name in self.consequential
            else t
            for t in tool_defs
        ]

    async def before_tool_validate(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: RawToolArgs,
    ) -> RawToolArgs:
        if tool_def.name not in self.consequential:
            return args
        return _split(call)[0]  # the tool's own arguments; the guard reads `cites` from the call

    async def before_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
    ) -> dict[str, Any]:
        if tool_def.name in self.consequential:
            arguments, cites = _split(call)
            verdict = await self._active().guard(tool_def.name, arguments, cites)
            if not verdict.approved:
                raise ToolFailed(m.refused_text(tool_def.name, verdict.reason))
        return args

    async def after_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        result: Any,
    ) -> Any:
        if tool_def.name in m.TOOLS or tool_def.kind != "function":
            return result
        value = result.return_value if isinstance(result, ToolReturn) else result
        output = value if isinstance(value, str) else to_json(value).decode()
        arguments = _split(call)[0]
        oid = await self._active().observe(tool_def.name, arguments, output, False)
        kept = m.kept_text(output, oid)
        return replace(result, return_value=kept) if isinstance(result, ToolReturn) else kept

    # -- shared -----------------------------------------------------------------------------------

    def _active(self) -> AsyncRun | ThreadedRun:
        if self._run is None:
            raise UsageError("FlowStateCapability: no run has begun (used outside agent.run?)")
        return self._run

    def _memory_tool(self, name: str) -> Tool[Any]:
        model, description = m.TOOLS[name]

        async def call(**arguments: Any) -> str:
            try:
                return await self._active().call(name, arguments)
            except Refused as e:
                raise ToolFailed(str(e)) from None

        schema = model.model_json_schema()
        schema.pop("title", None)
        return Tool.from_schema(call, name=name, description=description, json_schema=schema)


def _split(call: ToolCallPart) -> tuple[dict[str, Any], list[str]]:
    try:
        return m.split_cites(call.args_as_dict())
    except Refused as e:
        raise ToolFailed(str(e)) from None


def _prompt_text(prompt: str | Sequence[Any] | None) -> str:
    if isinstance(prompt, str) or prompt is None:
        return prompt or ""
    return "\n".join(part for part in prompt if isinstance(part, str))
