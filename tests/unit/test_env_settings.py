"""A setting that does not parse names its variable, in one line, from the library and from the
command line (no validation dump, no documentation links)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from flowstate.errors import UsageError
from flowstate.mcp.settings import McpSettings
from flowstate.settings import Neo4jSettings


@pytest.mark.parametrize(
    ("variable", "value", "settings"),
    [
        ("FLOWSTATE_MCP_READ_ONLY", "tru", McpSettings),
        ("FLOWSTATE_MCP_PAGE_CHARS", "10", McpSettings),
        ("FLOWSTATE_NEO4J_CONNECT_TIMEOUT_S", "abc", Neo4jSettings),
    ],
)
def test_a_bad_value_is_a_usage_error_naming_its_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, settings: type
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(UsageError) as refused:
        settings()
    assert str(refused.value).startswith(f"{variable}={value!r}: ")
    assert "\n" not in str(refused.value) and "pydantic" not in str(refused.value)


def test_the_mcp_command_says_it_in_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from flowstate.cli.app import main; main()", "mcp", "-N", "x"],
        env={"FLOWSTATE_MCP_ALLOW_FORGET": "maybe", "PATH": ""},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "Error: FLOWSTATE_MCP_ALLOW_FORGET='maybe': should be a valid boolean, "
        "unable to interpret input"
    ]
