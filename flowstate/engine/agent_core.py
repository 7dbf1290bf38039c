"""What the sync and the async agent share, without I/O: a writer of requests
(`flowstate.engine.request_plans`) with a model, the hooks around its calls, and how a failure
under a request keeps it for `resume()`.

A shell runs the plans on its own repository, `repo.run(plan)` or `await repo.run(plan)`, so
beginning a request, refreshing the index, saving a draft, revealing, committing and
discarding are written once for both shells.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from flowstate.engine.driver import (
    CallModel,
    StepDriver,
)
from flowstate.engine.index_view import R
from flowstate.engine.prompt import Prompt
from flowstate.engine.request_plans import Approver, RequestPlans
from flowstate.engine.step import AgentConfig
from flowstate.engine.tools import Tool
from flowstate.errors import (
    ModelError,
    RequestInterrupted,
    StoreError,
    UsageError,
)
from flowstate.llm.client import Completion, ModelClient
from flowstate.models.active import ActiveState
from flowstate.models.step import StepOutput
from flowstate.safety.redaction import Redactor

# One model call: the prompt as its parts, and the reply (its `sent` is what reached litellm).
CallHook = Callable[[Prompt, Completion[StepOutput]], None]
# Rewrites a step's prompt before it is rendered and sent (runs in the shell, so it may read).
PromptProcessor = Callable[[Prompt], Prompt]
# Rewrites the model's reply before the rules see it (e.g. an ablation that drops its delta).
ReplyProcessor = Callable[[Prompt, Completion[StepOutput]], Completion[StepOutput]]

__all__ = ["AgentCore", "Approver", "CallHook", "PromptProcessor", "ReplyProcessor"]


class AgentCore(RequestPlans[R]):
    """One namespace (its repository, sync or async), one model, a set of tools; the shells
    add the I/O."""

    def __init__(
        self,
        repo: R,
        model: ModelClient | None,
        tools: Iterable[Tool] = (),
        config: AgentConfig | None = None,
        approve: Approver | None = None,
        redact: Redactor[Any] | None = None,
    ) -> None:
        name = getattr(model, "model", None)
        super().__init__(
            repo, tools, config, approve, redact, name if isinstance(name, str) else None
        )
        self.model = model
        # Called after every step, the final one too (after its commit), e.g. for progress.
        self.on_step: Callable[[ActiveState], None] | None = None
        # Called after every model call with its prompt and reply (for transcripts and token
        # accounting); None keeps nothing.
        self.on_call: CallHook | None = None
        self.prompt_processors: list[PromptProcessor] = []
        self.reply_processors: list[ReplyProcessor] = []

    @contextmanager
    def keeping_inflight(self, driver: StepDriver) -> Iterator[None]:
        """A failure under a request that had begun is `RequestInterrupted`, naming the request
        kept (on a database failure, its Active State is kept here too, for resume()). A
        model failure before anything was done stays a `ModelError`: the shell drops that
        request."""
        active = driver.active
        try:
            yield
        except StoreError as e:
            self._inflight = active
            raise RequestInterrupted(
                f"{e}. Request {active.request_id} is kept: resume or discard it once the "
                "database answers",
                active.request_id,
                e,
            ) from e
        except ModelError as e:
            if active.step == 0 and active.finish is None:
                raise ModelError(f"{e}. Nothing was done, so no request was kept") from e
            raise RequestInterrupted(
                f"{e}. Request {active.request_id} is kept: resume or discard it",
                active.request_id,
                e,
            ) from e

    @contextmanager
    def keeping_reply(self, reply: Completion[StepOutput] | None) -> Iterator[None]:
        """When the draft save inside fails, keep the model's `reply` for resume()."""
        try:
            yield
        except StoreError:
            self.unsaved_reply = reply
            raise

    @property
    def client(self) -> ModelClient:
        """The model; an agent without one (a session's) takes its steps from the host."""
        if self.model is None:
            raise UsageError("this agent has no model: its steps come from the host")
        return self.model

    def prompt_for(self, command: CallModel) -> Prompt:
        """The step's prompt after the processors, as it will be sent."""
        prompt = command.prompt
        for process in self.prompt_processors:
            prompt = process(prompt)
        return prompt

    def called(self, prompt: Prompt, completion: Completion[StepOutput]) -> Completion[StepOutput]:
        """The model's reply as the rules will see it; `on_call` sees it as the model sent it."""
        if self.on_call is not None:
            self.on_call(prompt, completion)
        for process in self.reply_processors:
            completion = process(prompt, completion)
        return completion

    def stepped(self, active: ActiveState) -> None:
        if self.on_step is not None:
            self.on_step(active)
