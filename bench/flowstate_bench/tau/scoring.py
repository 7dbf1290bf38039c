"""Scoring as tau-bench does it: database match, reference actions, required information,
the reward as the product of the task's reward basis, and pass^k over trials.

What cannot be judged offline is left out of the product and reported as unjudged:
NL_ASSERTION (it needs an LLM judge) and env assertions about the user's side (the user has
no tools here). A task whose basis is only unjudged parts gets reward 1.0 with those parts
listed, so the report never hides that it was not judged.

>>> pass_hat_k([(3, 5)], 1), pass_hat_k([(3, 5)], 2), round(pass_hat_k([(3, 5)], 3), 10)
(0.6, 0.3, 0.1)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from math import comb, prod

from flowstate_bench.tau.data import Action, Task, TauData
from flowstate_bench.tau.domains import make_env
from flowstate_bench.tau.env import Environment, EnvOptions, ToolCallRecord


@dataclass(frozen=True)
class TaskScore:
    task_id: str
    db_match: bool
    actions_matched: int
    actions_total: int
    communicated: int
    communicate_total: int
    reward: float
    components: dict[str, float] = field(default_factory=dict)
    unjudged: list[str] = field(default_factory=list)

    @property
    def success(self) -> bool:
        return self.reward >= 1 - 1e-6

    @property
    def action_accuracy(self) -> float | None:
        """Share of reference actions reproduced; None for a task without any."""
        return self.actions_matched / self.actions_total if self.actions_total else None


def replay(env: Environment, actions: Iterable[Action]) -> Environment:
    """Run the reference actions in order through the same tool path an agent uses."""
    for action in actions:
        env.call(action.name, action.arguments)
    return env


class Scorer:
    """Scores finished conversations of one data folder; reference hashes are computed once."""

    def __init__(self, data: TauData, options: EnvOptions | None = None) -> None:
        self.data, self.options = data, options
        self._gold: dict[tuple[str, str], str] = {}

    def reference_hash(self, task: Task) -> str:
        key = (task.domain, task.id)
        if key not in self._gold:
            env = replay(make_env(task.domain, self.data, task, self.options), task.actions)
            self._gold[key] = env.hash()
        return self._gold[key]

    def score(self, task: Task, env: Environment, answers: Sequence[str]) -> TaskScore:
        return score_task(task, env, answers, self.reference_hash(task))


def score_task(
    task: Task, env: Environment, answers: Sequence[str], reference_hash: str
) -> TaskScore:
    """Score one conversation: `env` is the agent's environment after it, `answers` every
    message the agent sent to the user."""
    db_match = env.hash() == reference_hash
    matched = matched_actions(task.actions, env.calls)
    told = sum(communicated(info, answers) for info in task.communicate_info)
    verdicts = [env.check_assertion(a) for a in task.env_assertions]
    components: dict[str, float] = {}
    unjudged: list[str] = []
    for basis in task.reward_basis:
        if basis == "DB":
            components[basis] = float(db_match)
        elif basis == "ACTION":
            components[basis] = float(matched == len(task.actions))
        elif basis == "COMMUNICATE":
            components[basis] = float(told == len(task.communicate_info))
        elif basis == "ENV_ASSERTION" and None not in verdicts:
            components[basis] = float(all(verdicts))
        else:
            unjudged.append(basis)
    return TaskScore(
        task_id=task.id,
        db_match=db_match,
        actions_matched=matched,
        actions_total=len(task.actions),
        communicated=told,
        communicate_total=len(task.communicate_info),
        reward=prod(components.values()),
        components=components,
        unjudged=unjudged,
    )


def matched_actions(reference: Sequence[Action], calls: Sequence[ToolCallRecord]) -> int:
    """How many reference actions some executed call reproduced, one call per action."""
    free = list(calls)
    matched = 0
    for action in reference:
        wanted = action.compared()
        hit = next(
            (
                c
                for c in free
                if c.name == action.name
                and all(k in c.arguments and c.arguments[k] == v for k, v in wanted.items())
            ),
            None,
        )
        if hit is not None:
            free.remove(hit)
            matched += 1
    return matched


def communicated(info: str, answers: Iterable[str]) -> bool:
    # As tau-bench: case-insensitive, commas dropped from the answer so "1,628" counts as 1628.
    needle = info.lower()
    return any(needle in a.lower().replace(",", "") for a in answers)


def pass_hat_k(outcomes: Iterable[tuple[int, int]], k: int) -> float:
    """Mean over tasks of C(successes, k) / C(trials, k); `outcomes` are (successes, trials)
    per task. Tasks with fewer than k trials cannot say and are left out."""
    ratios = [comb(c, k) / comb(n, k) for c, n in outcomes if n >= k]
    return sum(ratios) / len(ratios) if ratios else 0.0
