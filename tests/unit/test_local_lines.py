"""The Neo4j release lines the managed server runs: versions, aliases, flags, and the refusal
to open a data folder with an older version than the one that last ran it. No server needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowstate.errors import LocalServerError
from flowstate.local.lines import (
    CALENDAR,
    CALENDAR_JAVA_21,
    LTS,
    LTS_VERSION,
    NEWEST_VERSION,
    Neo4jLine,
    line_for,
    version_key,
)
from flowstate.local.server import LocalServer
from flowstate.settings import LocalServerSettings


@pytest.mark.parametrize(
    ("version", "line", "main_class"),
    [
        ("5.26.30", LTS, "org.neo4j.server.CommunityEntryPoint"),
        ("2025.05.1", CALENDAR_JAVA_21, "org.neo4j.server.Neo4jCommunity"),
        ("2025.10.1", CALENDAR, "org.neo4j.server.Neo4jCommunity"),
        (NEWEST_VERSION, CALENDAR, "org.neo4j.server.Neo4jCommunity"),
    ],
)
def test_each_version_maps_to_its_line(version: str, line: Neo4jLine, main_class: str) -> None:
    assert line_for(version) is line
    assert line.main_class == main_class


@pytest.mark.parametrize("version", ["4.4.40", "six", ""])
def test_unsupported_versions_are_refused(version: str) -> None:
    with pytest.raises(LocalServerError, match="5.26"):
        line_for(version)


@pytest.mark.parametrize(
    ("given", "full"),
    [("lts", LTS_VERSION), ("5.26", LTS_VERSION), ("latest", NEWEST_VERSION),
     ("2026", NEWEST_VERSION), (" 2025.10.1 ", "2025.10.1")],
)  # fmt: skip
def test_aliases_name_full_versions(given: str, full: str) -> None:
    assert LocalServerSettings(neo4j_version=given).neo4j_version == full


def test_java_25_gets_the_unsafe_flag_and_2026_the_extra_opens() -> None:
    assert "--sun-misc-unsafe-memory-access=allow" in CALENDAR.jvm_flags(25)
    assert "--sun-misc-unsafe-memory-access=allow" not in CALENDAR.jvm_flags(21)
    concurrent = "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED"
    assert concurrent in CALENDAR.jvm_flags(21)
    assert concurrent not in LTS.jvm_flags(17)


def test_versions_order_across_lines() -> None:
    assert version_key("5.26.30") < version_key("2025.10.1") < version_key(NEWEST_VERSION)
    assert version_key("5.26.9") < version_key("5.26.30")


def test_an_older_version_is_refused_on_a_folder_a_newer_one_ran(tmp_path: Path) -> None:
    """Neo4j 5.26 cannot read a store that 2026.x wrote: say so before anything starts."""
    server = LocalServer(LocalServerSettings(data_dir=tmp_path, neo4j_version="lts"))
    server.home.mkdir(parents=True)
    server.version_file.write_text(NEWEST_VERSION)
    with pytest.raises(LocalServerError) as err:
        server.start()
    message = str(err.value)
    assert f"last run by Neo4j {NEWEST_VERSION}" in message
    assert f"--version {NEWEST_VERSION}" in message
    assert "FLOWSTATE_LOCAL_DATA_DIR" in message
    assert not (server.home / "conf").exists()  # refused before the folder was touched
