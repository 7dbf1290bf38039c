"""The command-line start-up probe: its profile attribution, and one real measurement."""

from __future__ import annotations

import doctest

from flowstate_bench import startup, targets


def test_doctests() -> None:
    for module in (startup, targets):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__


def test_a_measurement_runs_the_real_console_script() -> None:
    cli = startup.measure(1)
    ms = cli["median_ms"]
    assert set(ms) == {
        "flowstate --help",
        "flowstate index --help",
        "python -c 'import click'",
        "python -c 'pass'",
    }
    # A measurement, not a race: which command started faster is the report's to say (one
    # sample each on a loaded machine decides nothing), so only its arithmetic is held here.
    assert all(value > 0 for value in ms.values())
    assert cli["ratio"] == round(ms["flowstate --help"] / ms["python -c 'import click'"], 2)
    assert cli["runs"] == 1 and len(cli["load_average"]) == 2
    # The profile names what `--help` imports beyond click: the command modules, and the
    # plugin's (the bench's) commands, found without importlib.metadata.
    assert "flowstate.cli.app" in cli["beyond_click_ms"]
    assert "importlib.metadata" not in cli["beyond_click_ms"]
