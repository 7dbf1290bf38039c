"""flowstate-memory-bench plugs `flowstate bench` into the library's command line by entry point."""

from click.testing import CliRunner

from flowstate.cli.app import main
from flowstate.cli.plugins import plugin_commands
from flowstate_bench.cli import bench


def test_the_entry_point_brings_the_real_bench_group() -> None:
    assert bench in plugin_commands()
    result = CliRunner().invoke(main, ["bench", "--help"])
    assert result.exit_code == 0
    for sub in ("tau", "faults"):
        assert sub in result.output
