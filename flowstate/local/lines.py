"""The Neo4j release lines the managed local server runs, and what each one needs.

5.26 is the LTS of the 5.x series (Java 17 or 21, main class `CommunityEntryPoint`). From 2025.01
Neo4j is versioned by calendar (`2026.08.1`): Java 21 (and 25 from 2025.10), main class
`Neo4jCommunity`. Both lines come from the same Maven Central artifacts and take the same
`neo4j.conf` keys that FlowState writes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from flowstate.errors import LocalServerError
from flowstate.settings import LTS_VERSION, NEWEST_VERSION

# JVM flags every line gets: what `bin/neo4j` adds from its default neo4j.conf.
_COMMON_FLAGS = (
    "-XX:+UseG1GC", "-XX:-OmitStackTraceInFastThrow", "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields", "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024", "-Dio.netty.tryReflectionSetAccessible=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "--enable-native-access=ALL-UNNAMED",
    "-Dlog4j2.disable.jmx=true", "-Dfile.encoding=UTF-8",
)  # fmt: skip
_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


@dataclass(frozen=True)
class Neo4jLine:
    """One release line: which Java it runs on and how it is launched."""

    name: str
    java_majors: tuple[int, ...]
    main_class: str
    extra_flags: tuple[str, ...] = ()

    @property
    def java_wanted(self) -> str:
        """`17 or 21`, for messages."""
        *head, last = (str(m) for m in self.java_majors)
        return f"{', '.join(head)} or {last}" if head else last

    def jvm_flags(self, java_major: int) -> list[str]:
        flags = [*_COMMON_FLAGS, *self.extra_flags]
        if java_major >= 25:
            # Java 25 warns on sun.misc.Unsafe unless allowed; bin/neo4j adds this from 25 on.
            flags.append("--sun-misc-unsafe-memory-access=allow")
        return flags


LTS = Neo4jLine("5.26 LTS", (17, 21), "org.neo4j.server.CommunityEntryPoint")
_CALENDAR_FLAGS = ("--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",)
CALENDAR_JAVA_21 = Neo4jLine(
    "2025.01-2025.09", (21,), "org.neo4j.server.Neo4jCommunity", _CALENDAR_FLAGS
)
CALENDAR = Neo4jLine(
    "2025.10+ / 2026.x", (21, 25), "org.neo4j.server.Neo4jCommunity", _CALENDAR_FLAGS
)
LINES = (LTS, CALENDAR_JAVA_21, CALENDAR)


def line_for(version: str) -> Neo4jLine:
    """The release line of a full version: `5.26.30` -> LTS, `2026.08.1` -> CALENDAR."""
    match = _VERSION.match(version)
    if match is None:
        raise LocalServerError(
            f"Unrecognised Neo4j version {version!r}: use a 5.26.x or 2025.x/2026.x version "
            f"(e.g. {LTS_VERSION} or {NEWEST_VERSION}), or lts / latest."
        )
    major, minor = int(match.group(1)), int(match.group(2))
    if major >= 2025:
        return CALENDAR if (major, minor) >= (2025, 10) else CALENDAR_JAVA_21
    if major == 5:  # 5.26 is the one supported; older 5.x launch the same way
        return LTS
    raise LocalServerError(
        f"Neo4j {version} is not a line the local server runs: use 5.26.x (LTS) or "
        f"2025.x/2026.x (e.g. {NEWEST_VERSION})."
    )


def version_key(version: str) -> tuple[int, ...]:
    """`2026.08.1` -> (2026, 8, 1), for ordering versions; non-numeric parts count as 0."""
    return tuple(int(part) if part.isdigit() else 0 for part in version.split("-")[0].split("."))


def java_requirements() -> str:
    """What every line needs, for the error when no suitable Java is found."""
    return "; ".join(f"Neo4j {line.name} needs Java {line.java_wanted}" for line in LINES)
