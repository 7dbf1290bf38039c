"""Java detection and the test fixture's source order: no server needed."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from flowstate.errors import LocalServerError
from flowstate.local.java import find_java, parse_java_version
from flowstate.local.testing import Source, choose_source


@pytest.mark.parametrize(
    ("text", "major"),
    [
        ('openjdk version "17.0.15" 2025-04-15', 17),
        ('openjdk version "21" 2023-09-19', 21),
        ('java version "1.8.0_392"', 8),
        ('openjdk version "25.0.1" 2025-10-21 LTS', 25),
    ],
)
def test_parse_java_version(text: str, major: int) -> None:
    assert parse_java_version(text) == major


def test_unreadable_version_is_a_clear_error() -> None:
    with pytest.raises(LocalServerError, match="Could not read the Java version"):
        parse_java_version("command not found")


def _fake_java(tmp_path: Path, version_line: str) -> Path:
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    java.chmod(java.stat().st_mode | stat.S_IEXEC)
    return home


def test_wrong_java_version_names_the_fix(tmp_path: Path) -> None:
    home = _fake_java(tmp_path, 'openjdk version "11.0.2" 2019-01-15')
    with pytest.raises(LocalServerError) as err:
        find_java(home)
    assert "needs Java 17 or 21" in str(err.value)
    assert "Java 11" in str(err.value)
    assert "JAVA_HOME" in str(err.value)


def test_supported_java_is_accepted(tmp_path: Path) -> None:
    home = _fake_java(tmp_path, 'openjdk version "21.0.4" 2024-07-16')
    assert find_java(home).major == 21


def test_missing_java_home_binary(tmp_path: Path) -> None:
    with pytest.raises(LocalServerError, match="No java at"):
        find_java(tmp_path / "nowhere")


def test_no_java_on_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(LocalServerError, match="Java not found"):
        find_java(None)


@pytest.mark.parametrize(
    ("uri", "docker", "source"),
    [
        ("bolt://db:7687", True, Source.CONFIGURED),
        ("neo4j+s://x.databases.neo4j.io", False, Source.CONFIGURED),
        (None, True, Source.TESTCONTAINERS),
        ("", True, Source.TESTCONTAINERS),
        (None, False, Source.LOCAL),
    ],
)
def test_fixture_source_order(uri: str | None, docker: bool, source: Source) -> None:
    assert choose_source(uri, docker) is source
