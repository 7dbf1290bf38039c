"""tau-bench (the tau2 "tau3" airline and retail domains) with FlowState and its baselines.

The environments are written here from the data and the domains' policy documents; only the
data files come from the benchmark (see `data.py` for where they are looked for).

>>> from flowstate.bench.tau import TauData, make_env, score_task    # doctest: +SKIP
>>> data = TauData.locate()                                          # doctest: +SKIP
>>> task = data.tasks("retail")[0]                                   # doctest: +SKIP
>>> env = make_env("retail", data)                                   # doctest: +SKIP
"""

from flowstate.bench.tau.data import DOMAINS, Action, Task, TauData, db_hash
from flowstate.bench.tau.env import Environment, ToolCallRecord, make_env
from flowstate.bench.tau.scoring import TaskScore, pass_hat_k, score_task

__all__ = [
    "DOMAINS",
    "Action",
    "Environment",
    "Task",
    "TaskScore",
    "TauData",
    "ToolCallRecord",
    "db_hash",
    "make_env",
    "pass_hat_k",
    "score_task",
]
