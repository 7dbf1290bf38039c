"""tau-bench (the tau2 "tau3" airline and retail domains) with FlowState and its baselines.

The environments are our own code and behave as the original's, call for call (checked by
replaying its recorded episodes: `parity.py`); only the data files come from the benchmark,
from a folder given explicitly (`--data DIR` or `FLOWSTATE_TAU_DATA`).

>>> from flowstate_bench.tau import RunConfig, TauData, TauRunner          # doctest: +SKIP
>>> data = TauData(Path("../shared/data"))                                     # doctest: +SKIP
>>> config = RunConfig(domain="retail", strategies=["full", "bm25"], limit=5)  # doctest: +SKIP
>>> convs = TauRunner(config, data).run()    # the scripted oracle, offline        # doctest: +SKIP
>>> [c.score.reward for c in convs]                                             # doctest: +SKIP
"""

import typing

from flowstate import lazy

# Imported on first use, as in `flowstate`: `flowstate bench tau --help` loads `tau.cli`,
# which must not pay for the runner, the environments and the engine.
_EXPORTS = {
    **dict.fromkeys(
        ("DOMAINS", "Action", "Snapshot", "Task", "TauData", "db_hash"), "flowstate_bench.tau.data"
    ),
    **dict.fromkeys(("Environment", "EnvOptions", "ToolCallRecord"), "flowstate_bench.tau.env"),
    **dict.fromkeys(("Conversation", "RunConfig", "TauRunner"), "flowstate_bench.tau.runner"),
    **dict.fromkeys(
        ("Scorer", "TaskScore", "pass_hat_k", "score_task"), "flowstate_bench.tau.scoring"
    ),
    "make_env": "flowstate_bench.tau.domains",
    "STRATEGIES": "flowstate_bench.tau.strategies",
}

__all__ = [
    "DOMAINS",
    "STRATEGIES",
    "Action",
    "Conversation",
    "EnvOptions",
    "Environment",
    "RunConfig",
    "Scorer",
    "Snapshot",
    "Task",
    "TaskScore",
    "TauData",
    "TauRunner",
    "ToolCallRecord",
    "db_hash",
    "make_env",
    "pass_hat_k",
    "score_task",
]

__getattr__, __dir__ = lazy.lazy_exports(__name__, _EXPORTS)

if typing.TYPE_CHECKING:
    from flowstate_bench.tau.data import DOMAINS, Action, Snapshot, Task, TauData, db_hash
    from flowstate_bench.tau.domains import make_env
    from flowstate_bench.tau.env import Environment, EnvOptions, ToolCallRecord
    from flowstate_bench.tau.runner import Conversation, RunConfig, TauRunner
    from flowstate_bench.tau.scoring import Scorer, TaskScore, pass_hat_k, score_task
    from flowstate_bench.tau.strategies import STRATEGIES
