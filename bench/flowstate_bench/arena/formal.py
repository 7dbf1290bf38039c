"""formal_reasoning_math / _phys: chains of questions on one paper, judged for equivalence."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

from flowstate.engine.tools import Tool
from flowstate.llm.client import ModelClient
from flowstate.models.records import Usage
from flowstate_bench.arena.data import ArenaTask
from flowstate_bench.arena.domain import Call, Scored
from flowstate_bench.arena.scoring import exact_match

POLICY = (
    "You are a math reasoning assistant. Use the BACKGROUND of the problem and what you "
    "remember of earlier problems of the same paper. You may call the tool reasoning(input) "
    "for a careful sub-derivation. Answer with the final expression only, in LaTeX."
)
SOLVER = "You are a careful math solver. Derive the result step by step and state it at the end."
JUDGE = (
    "Decide whether two expressions are mathematically equivalent answers to the question. "
    "Reply with yes or no only."
)
FORGOT = "I cannot determine this without the earlier results."


class Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    answer: str


class Judge:
    """An LLM judge (`model`), or offline a normalised exact match."""

    def __init__(self, client: ModelClient | None = None) -> None:
        self.client = client
        self.usage = Usage()

    @property
    def kind(self) -> str:
        return f"llm:{self.client.model}" if self.client else "exact-match"

    def __call__(self, question: str, answer: str, gold: str) -> bool:
        if self.client is None:
            return exact_match(answer, gold)
        # Upstream sends no question (its slot shows None); we send it, a recorded deviation.
        prompt = f"Question: {question}\nAnswer A: {answer}\nAnswer B: {gold}\nEquivalent?"
        done = self.client.complete(
            [{"role": "system", "content": JUDGE}, {"role": "user", "content": prompt}], Reply
        )
        self.usage += done.usage
        reply = done.value.answer if done.value is not None else done.text
        return "yes" in reply.lower()


class FormalTask:
    def __init__(self, task: ArenaTask, model: Callable[[], ModelClient], judge: Judge) -> None:
        # `model` gives the task agent's client when the tool runs (it exists only later).
        self.task, self.model, self.judge = task, model, judge
        self.usage = Usage()  # the reasoning tool's sub-calls
        self.trace: list[dict[str, str]] = []

        def reasoning(input: str) -> str:  # noqa: A002 - the upstream parameter name
            """A careful sub-derivation by the same model."""
            msgs = [{"role": "system", "content": SOLVER}, {"role": "user", "content": input}]
            done = self.model().complete(msgs, Reply)
            self.usage += done.usage
            out = done.value.answer if done.value is not None else done.text
            self.trace.append({"input": input, "output": out})
            return out

        self._tools = [Tool.from_function(reasoning)]

    def tools(self) -> list[Tool]:
        return self._tools

    def base_chunks(self) -> list[str]:
        return ["Initial result: Empty\n"]

    def base_request(self) -> str | None:
        return None

    def prompt(self, k: int) -> str:
        self.trace = []
        question = self.task.questions[k - 1]
        if "### BACKGROUND:" in question and "### PROBLEM:" in question:
            return question
        backgrounds = self.task.row.get("backgrounds") or []
        background = backgrounds[k - 1] if k - 1 < len(backgrounds) else ""
        return (
            f"### BACKGROUND:\n{background or 'No information provided.'}\n### PROBLEM:\n{question}"
        )

    def chunks(self, k: int, answer: str) -> list[str]:
        chunk = f"## Task: {self.task.questions[k - 1]}\n## solution: {answer}\n"
        if self.trace:
            chunk += f"## Tool Calls Info: {self.trace}\n"
        return [chunk]

    def gold_chunks(self, j: int) -> list[str]:
        return [f"## Task: {self.task.questions[j - 1]}\n## solution: {self.task.answers[j - 1]}\n"]

    def note(self, k: int, answer: str) -> str:
        # The result alone: the question is the request's own text, never copied.
        return f"## solution: {answer}"

    def outcome(self, k: int, answer: str) -> str:
        return answer

    def score(self, outcomes: list[str]) -> Scored:
        passed = [
            self.judge(q, a, str(g))
            for q, a, g in zip(self.task.questions, outcomes, self.task.answers, strict=False)
        ]
        return Scored(passed, [float(p) for p in passed])

    def gold_fact(self, j: int) -> str:
        return f"## solution: {self.task.answers[j - 1]}"

    def next_call(self, k: int, good: bool, text: str, done: int) -> Call | None:
        return None

    def final(self, k: int, good: bool, text: str) -> str:
        return str(self.task.answers[k - 1]) if good else FORGOT
