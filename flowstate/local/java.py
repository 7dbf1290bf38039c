"""Finding a Java runtime that Neo4j 5.26 accepts (17 or 21)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from flowstate.errors import LocalServerError

SUPPORTED_MAJORS = (17, 21)
_VERSION = re.compile(r'version "(\d+)(?:\.(\d+))?[^"]*"')


@dataclass(frozen=True)
class Java:
    executable: Path
    major: int


def find_java(java_home: Path | None = None) -> Java:
    """The `java` to run Neo4j with: FLOWSTATE_LOCAL_JAVA_HOME, then JAVA_HOME, then PATH."""
    home = java_home or (Path(os.environ["JAVA_HOME"]) if os.environ.get("JAVA_HOME") else None)
    if home is not None:
        executable = home / "bin" / "java"
        if not executable.exists():
            raise LocalServerError(
                f"No java at {executable}: point JAVA_HOME (or FLOWSTATE_LOCAL_JAVA_HOME) "
                "at a JDK 17 or 21."
            )
    else:
        found = shutil.which("java")
        if found is None:
            raise LocalServerError(
                "Java not found: the local Neo4j needs Java 17 or 21. Install one "
                "(e.g. `apt-get install openjdk-17-jre-headless`) or set JAVA_HOME."
            )
        executable = Path(found)
    major = java_major_version(executable)
    if major not in SUPPORTED_MAJORS:
        raise LocalServerError(
            f"Neo4j 5.26 needs Java 17 or 21, but {executable} is Java {major}. "
            "Set JAVA_HOME (or FLOWSTATE_LOCAL_JAVA_HOME) to a JDK 17 or 21."
        )
    return Java(executable=executable, major=major)


def java_major_version(executable: Path) -> int:
    try:
        result = subprocess.run(
            [str(executable), "-version"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise LocalServerError(f"Could not run {executable} -version: {e}") from e
    return parse_java_version(result.stderr + result.stdout, executable)


def parse_java_version(text: str, executable: Path | str = "java") -> int:
    """`openjdk version "17.0.15"` -> 17; `java version "1.8.0_392"` -> 8."""
    match = _VERSION.search(text)
    if match is None:
        raise LocalServerError(f"Could not read the Java version from `{executable} -version`.")
    first, second = int(match.group(1)), match.group(2)
    return int(second) if first == 1 and second else first
