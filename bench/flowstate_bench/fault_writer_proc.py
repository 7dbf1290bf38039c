"""A many-writer run's writer in a process of its own, so that it can be SIGKILLed for real:
`python -m flowstate_bench.fault_writer_proc JOB_JSON` runs the job and prints its events as
JSON lines on standard output, each flushed as it happens."""

from __future__ import annotations

import json
import sys
from typing import Any

from flowstate.settings import Neo4jSettings
from flowstate_bench.fault_writer_jobs import WriterJob
from flowstate_bench.fault_writer_shells import run_writer


def job_argument(job: WriterJob) -> str:
    """The job as this module's command-line argument; never the password (the process reads
    FLOWSTATE_NEO4J_PASSWORD from its environment, as every FlowState command does)."""
    fields = {k: v for k, v in vars(job).items() if k != "settings"}
    settings = job.settings.model_dump(mode="json", exclude={"password"})
    return json.dumps({**fields, "settings": settings})


def _emit(event: dict[str, Any]) -> None:
    print(json.dumps(event), flush=True)


def main(argv: list[str]) -> int:
    raw = json.loads(argv[0])
    settings = Neo4jSettings(**raw.pop("settings"))
    run_writer(WriterJob(settings=settings, **raw), _emit)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
