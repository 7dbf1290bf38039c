"""Finding a Java runtime that the chosen Neo4j line accepts, the way a user's machine has one.

Order: FLOWSTATE_LOCAL_JAVA_HOME (an explicit choice: it must fit), then JAVA_HOME, then `java`
on PATH, then the usual JVM folders. The first one whose major version suits the line wins, so
a machine whose default Java is 17 still runs Neo4j 2026.x on a JDK 25 installed beside it.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from flowstate.errors import LocalServerError
from flowstate.local.lines import Neo4jLine, java_requirements

# Where JDKs are installed by packages, installers and version managers (Linux, then macOS).
JVM_FOLDERS = (
    "/usr/lib/jvm/*",
    "/usr/java/*",
    "/opt/java/*",
    "~/.sdkman/candidates/java/*",
    "~/.jdks/*",
    "/Library/Java/JavaVirtualMachines/*/Contents/Home",
    "~/Library/Java/JavaVirtualMachines/*/Contents/Home",
    "/opt/homebrew/opt/openjdk*/libexec/openjdk.jdk/Contents/Home",
    "/usr/local/opt/openjdk*/libexec/openjdk.jdk/Contents/Home",
)
_VERSION = re.compile(r'version "(\d+)(?:\.(\d+))?[^"]*"')


@dataclass(frozen=True)
class Java:
    executable: Path
    major: int

    @property
    def home(self) -> Path:
        """The JDK folder (what JAVA_HOME would be), through any /usr/bin symlinks."""
        return self.executable.resolve().parent.parent


def find_java(
    line: Neo4jLine, java_home: Path | None = None, folders: Sequence[str] = JVM_FOLDERS
) -> Java:
    """The `java` to run `line` with; a clear error naming what each line needs when none fits."""
    if java_home is not None:
        return _explicit(line, java_home)
    seen: list[str] = []
    for origin, executable in _candidates(folders):
        if not executable.is_file():
            seen.append(f"{origin} has no {executable}")
            continue
        try:
            major = java_major_version(executable)
        except LocalServerError:
            seen.append(f"{executable} ({origin}, unreadable version)")
            continue
        if major in line.java_majors:
            return Java(executable=executable, major=major)
        seen.append(f"{executable} ({origin}, Java {major})")
    found = "Found: " + "; ".join(seen) + "." if seen else "No Java found at all."
    raise LocalServerError(
        f"Neo4j {line.name} needs Java {line.java_wanted}, and none was found. {found} "
        f"({java_requirements()}.) Install one (e.g. `apt-get install "
        f"openjdk-{line.java_majors[-1]}-jre-headless` or a Temurin JDK), or set "
        "FLOWSTATE_LOCAL_JAVA_HOME (or JAVA_HOME) to its folder."
    )


def _explicit(line: Neo4jLine, java_home: Path) -> Java:
    executable = java_home / "bin" / "java"
    if not executable.exists():
        raise LocalServerError(
            f"No java at {executable}: point FLOWSTATE_LOCAL_JAVA_HOME at a JDK "
            f"{line.java_wanted} (Neo4j {line.name})."
        )
    major = java_major_version(executable)
    if major not in line.java_majors:
        raise LocalServerError(
            f"Neo4j {line.name} needs Java {line.java_wanted}, but {executable} "
            f"(FLOWSTATE_LOCAL_JAVA_HOME) is Java {major}. Point FLOWSTATE_LOCAL_JAVA_HOME at a "
            f"JDK {line.java_wanted}, or unset it to search JAVA_HOME, PATH and the JVM folders "
            f"({java_requirements()})."
        )
    return Java(executable=executable, major=major)


def _candidates(folders: Sequence[str]) -> Iterator[tuple[str, Path]]:
    """(where it came from, executable), each real binary once."""
    listed: list[tuple[str, Path]] = []
    if os.environ.get("JAVA_HOME"):
        listed.append(("JAVA_HOME", Path(os.environ["JAVA_HOME"]) / "bin" / "java"))
    on_path = shutil.which("java")
    if on_path is not None:
        listed.append(("PATH", Path(on_path)))
    for pattern in folders:
        for home in sorted(glob.glob(os.path.expanduser(pattern))):
            listed.append((pattern.split("*")[0].rstrip("/"), Path(home) / "bin" / "java"))
    seen: set[Path] = set()
    for origin, executable in listed:
        if not executable.is_file():
            if origin == "JAVA_HOME":  # worth saying; a JVM folder without a java is not
                yield origin, executable
            continue
        real = executable.resolve()
        if real not in seen:
            seen.add(real)
            yield origin, executable


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
