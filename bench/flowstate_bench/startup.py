"""Start-up of the command line: `flowstate --help` against `python -c "import click"`.

Both run as fresh processes of the same interpreter, interleaved (so a burst of load hits
both), and the figure is the median wall time of each. What `--help` imports beyond click is
profiled once with `-X importtime` and attributed to the top-level import that pulled it in.

>>> profile = ["import time: self [us] | cumulative | imported package",
...            "import time: 5000 | 5000 | click",
...            "import time: 3000 | 3000 |   email",
...            "import time: 2000 | 5000 | importlib.metadata"]
>>> beyond(profile, {"click"})
{'importlib.metadata': 5.0}
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

GOAL_RATIO = 2.0
CLICK = [sys.executable, "-c", "import click"]
BARE = [sys.executable, "-c", "pass"]


def flowstate_command() -> list[str]:
    """The `flowstate` console script of this environment, as a user runs it."""
    script = Path(sysconfig.get_path("scripts")) / "flowstate"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from flowstate.cli.app import main; main()"]


def _wall_ms(command: Sequence[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - start) * 1e3


def _importtime(command: Sequence[str]) -> list[str]:
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    return [line for line in done.stderr.splitlines() if line.startswith("import time:")]


def _rows(lines: Iterable[str]) -> list[tuple[str, int, float]]:
    """(module, depth, self ms) per `-X importtime` line; the header is skipped."""
    rows = []
    for line in lines:
        head, _, name = line.split("|", 2)
        try:
            us = float(head.split(":", 1)[1])
        except ValueError:
            continue
        depth = (len(name) - len(name.lstrip()) - 1) // 2  # one space, then two per level
        rows.append((name.strip(), depth, us / 1e3))
    return rows


def beyond(lines: Sequence[str], baseline: set[str]) -> dict[str, float]:
    """Self time (ms) of the modules not in `baseline`, summed per top-level import: the
    profile lists children before their parent, so walking it backwards meets each
    top-level import before the modules it pulled in."""
    out: dict[str, float] = {}
    root = ""
    for name, depth, ms in reversed(_rows(lines)):
        if depth == 0:
            root = name
        if name not in baseline:
            out[root] = round(out.get(root, 0.0) + ms, 1)
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def measure(runs: int) -> dict[str, Any]:
    """Medians of `runs` interleaved start-ups of each command, the ratios to click's, and
    a profile of what `flowstate --help` imports beyond click."""
    flowstate = flowstate_command()
    commands = {
        "flowstate --help": [*flowstate, "--help"],
        "flowstate index --help": [*flowstate, "index", "--help"],  # lists no plugins
        "python -c 'import click'": CLICK,
        "python -c 'pass'": BARE,
    }
    load = os.getloadavg()
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            samples[name].append(_wall_ms(command))
    ms = {name: round(statistics.median(v), 1) for name, v in samples.items()}
    click = ms["python -c 'import click'"]
    click_modules = {name for name, _, _ in _rows(_importtime(CLICK))}
    extra = beyond(_importtime(commands["flowstate --help"]), click_modules)
    return {
        "median_ms": ms,
        "ratio": round(ms["flowstate --help"] / click, 2),
        "index_help_ratio": round(ms["flowstate index --help"] / click, 2),
        "goal_ratio": GOAL_RATIO,
        "runs": runs,
        "load_average": [round(load[0], 2), round(os.getloadavg()[0], 2)],
        "beyond_click_ms": dict(list(extra.items())[:8]),
    }
