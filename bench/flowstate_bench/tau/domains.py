"""The tau-bench domains by name: each is an `Environment` of its own module, which builds on
`env.py`; this module picks one."""

from __future__ import annotations

from flowstate.errors import UsageError
from flowstate_bench.tau.airline import AirlineEnv
from flowstate_bench.tau.data import Task, TauData
from flowstate_bench.tau.env import Environment, EnvOptions
from flowstate_bench.tau.mock import MockEnv
from flowstate_bench.tau.retail import RetailEnv

KINDS: dict[str, type[Environment]] = {"airline": AirlineEnv, "retail": RetailEnv, "mock": MockEnv}


def make_env(
    domain: str, data: TauData, task: Task | None = None, options: EnvOptions | None = None
) -> Environment:
    """A fresh environment of `domain` over its own view of the database, with the task's
    initial state applied when a task is given."""
    if domain not in KINDS:
        raise UsageError(f"unknown domain {domain!r}; one of {', '.join(KINDS)}")
    env = KINDS[domain](data.snapshot(domain), options)
    if task is not None:
        env.apply_initial_state(task)
    return env
