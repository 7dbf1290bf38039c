"""Java detection per Neo4j line and the test fixture's source order: no server needed.
Java is faked by scripts that print what `java -version` prints."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from flowstate.errors import LocalServerError
from flowstate.local.java import find_java, parse_java_version
from flowstate.local.lines import CALENDAR, LTS, LTS_VERSION, NEWEST_VERSION, line_for
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


def _fake_java(folder: Path, version_line: str) -> Path:
    """A JDK folder whose bin/java prints `version_line` as `java -version` does."""
    (folder / "bin").mkdir(parents=True)
    java = folder / "bin" / "java"
    java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    java.chmod(java.stat().st_mode | stat.S_IEXEC)
    return folder


JDK_17 = 'openjdk version "17.0.15" 2025-04-15'
JDK_21 = 'openjdk version "21.0.4" 2024-07-16'
JDK_25 = 'openjdk version "25.0.1" 2025-10-21 LTS'


@pytest.fixture
def bare_machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No JAVA_HOME and no java on PATH: only what a test puts in place is found."""
    monkeypatch.delenv("JAVA_HOME", raising=False)
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    return tmp_path


def _on_path(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    monkeypatch.setenv("PATH", str(home / "bin"))


def test_explicit_java_home_of_the_wrong_version_names_the_fix(tmp_path: Path) -> None:
    home = _fake_java(tmp_path / "jdk", 'openjdk version "11.0.2" 2019-01-15')
    with pytest.raises(LocalServerError) as err:
        find_java(LTS, home)
    message = str(err.value)
    assert "Neo4j 5.26 LTS needs Java 17 or 21" in message
    assert "is Java 11" in message
    assert "FLOWSTATE_LOCAL_JAVA_HOME" in message


def test_explicit_java_home_is_not_second_guessed(bare_machine: Path) -> None:
    """A JDK 17 chosen by hand is refused for 2026.x even when a 25 sits in a JVM folder."""
    chosen = _fake_java(bare_machine / "chosen", JDK_17)
    _fake_java(bare_machine / "jvm" / "temurin-25", JDK_25)
    with pytest.raises(LocalServerError, match="needs Java 21 or 25, but .* is Java 17"):
        find_java(CALENDAR, chosen, folders=[str(bare_machine / "jvm" / "*")])


def test_supported_java_is_accepted(tmp_path: Path) -> None:
    home = _fake_java(tmp_path / "jdk", JDK_21)
    assert find_java(LTS, home).major == 21
    assert find_java(CALENDAR, home).major == 21


def test_missing_java_home_binary(tmp_path: Path) -> None:
    with pytest.raises(LocalServerError, match="No java at"):
        find_java(LTS, tmp_path / "nowhere")


def test_java_home_is_used_when_it_fits(
    bare_machine: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _fake_java(bare_machine / "jdk25", JDK_25)
    _on_path(monkeypatch, _fake_java(bare_machine / "jdk21", JDK_21))
    monkeypatch.setenv("JAVA_HOME", str(home))
    assert find_java(CALENDAR, folders=[]).executable == home / "bin" / "java"


def test_path_java_is_used_when_java_home_does_not_fit(
    bare_machine: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JAVA_HOME", str(_fake_java(bare_machine / "jdk25", JDK_25)))
    on_path = _fake_java(bare_machine / "jdk17", JDK_17)
    _on_path(monkeypatch, on_path)
    java = find_java(LTS, folders=[])
    assert (java.executable, java.major) == (on_path / "bin" / "java", 17)


def test_jvm_folder_supplies_the_newer_java_beside_a_default_17(
    bare_machine: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """This machine's shape: java 17 on PATH, Temurin 25 in /usr/lib/jvm."""
    _on_path(monkeypatch, _fake_java(bare_machine / "jvm" / "java-17-openjdk", JDK_17))
    _fake_java(bare_machine / "jvm" / "temurin-25-jdk", JDK_25)
    folders = [str(bare_machine / "jvm" / "*")]
    newest = find_java(line_for(NEWEST_VERSION), folders=folders)
    assert (newest.executable.parent.parent.name, newest.major) == ("temurin-25-jdk", 25)
    assert find_java(line_for(LTS_VERSION), folders=folders).major == 17


def test_macos_style_folder_is_searched(bare_machine: Path) -> None:
    jdk = bare_machine / "JavaVirtualMachines" / "temurin-21.jdk" / "Contents" / "Home"
    _fake_java(jdk, JDK_21)
    pattern = str(bare_machine / "JavaVirtualMachines" / "*" / "Contents" / "Home")
    assert find_java(CALENDAR, folders=[pattern]).executable == jdk / "bin" / "java"


def test_none_fitting_lists_what_was_found_and_what_each_line_needs(
    bare_machine: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _on_path(monkeypatch, _fake_java(bare_machine / "jdk17", JDK_17))
    monkeypatch.setenv("JAVA_HOME", str(bare_machine / "gone"))
    with pytest.raises(LocalServerError) as err:
        find_java(line_for("2025.05.0"), folders=[])
    message = str(err.value)
    assert "Neo4j 2025.01-2025.09 needs Java 21, and none was found" in message
    assert "(PATH, Java 17)" in message
    assert "JAVA_HOME has no" in message
    assert "Neo4j 5.26 LTS needs Java 17 or 21" in message
    assert "Neo4j 2025.10+ / 2026.x needs Java 21 or 25" in message


def test_no_java_at_all(bare_machine: Path) -> None:
    with pytest.raises(LocalServerError, match="No Java found at all"):
        find_java(LTS, folders=[str(bare_machine / "no-jvms" / "*")])


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
