"""Assembling the Neo4j Community server and Browser from Maven Central jars.

Maven resolves the dependency tree once into FlowState's cache folder and writes the class path;
later starts read that file and download nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

from flowstate.errors import LocalServerError
from flowstate.local.resources import local_server_file
from flowstate.settings import LocalServerSettings

# Pinned so that resolution does not depend on whatever plugin version Maven picks.
_DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.6.1"
_DOWNLOAD_TIMEOUT_S = 1800


def cached_classpath(settings: LocalServerSettings) -> list[Path] | None:
    """The server's jars when a previous download completed and they are all still there."""
    if not settings.classpath_file.is_file():
        return None
    jars = [Path(p) for p in settings.classpath_file.read_text().split(os.pathsep) if p]
    if not jars or not all(j.is_file() for j in jars):
        return None
    return jars


def ensure_classpath(settings: LocalServerSettings, java_home: Path) -> tuple[list[Path], bool]:
    """The server's jars, downloading them first if needed. Returns (jars, downloaded)."""
    jars = cached_classpath(settings)
    if jars is not None:
        return jars, False
    maven = shutil.which(settings.maven)
    if maven is None:
        raise LocalServerError(
            f"Maven ({settings.maven!r}) not found: the first start downloads Neo4j from Maven "
            "Central with it. Install Maven (e.g. `apt-get install maven`) "
            "or set FLOWSTATE_LOCAL_MAVEN."
        )
    with _download_lock(settings):
        # Another process (a second `start`, a test) may have finished the download meanwhile.
        downloaded = cached_classpath(settings) is None
        if downloaded:
            _resolve(settings, maven, java_home)
    jars = cached_classpath(settings)
    if jars is None:
        raise LocalServerError(
            f"Maven finished but the class path at {settings.classpath_file} is incomplete; "
            "delete it and try again."
        )
    return jars, downloaded


@contextlib.contextmanager
def _download_lock(settings: LocalServerSettings) -> Iterator[None]:
    """One Maven at a time per cache: two writing one local repository can corrupt it."""
    settings.classpath_file.parent.mkdir(parents=True, exist_ok=True)
    with (settings.classpath_file.parent / "download.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _resolve(settings: LocalServerSettings, maven: str, java_home: Path) -> None:
    settings.classpath_file.parent.mkdir(parents=True, exist_ok=True)
    partial = settings.classpath_file.with_suffix(".partial")
    log = settings.classpath_file.with_suffix(".maven.log")
    command = [
        maven, "-B", "-q",
        "-f", str(local_server_file("pom.xml")),
        f"{_DEPENDENCY_PLUGIN}:build-classpath",
        "-DincludeScope=runtime",
        f"-Dmdep.outputFile={partial}",
        f"-Dmaven.repo.local={settings.maven_repo}",
        f"-Dneo4j.version={settings.neo4j_version}",
        f"-Dbrowser.version={settings.browser_version}",
    ]  # fmt: skip
    env = {**os.environ, "JAVA_HOME": str(java_home)}
    try:
        with log.open("w") as out:
            result = subprocess.run(
                command, stdout=out, stderr=subprocess.STDOUT, env=env, timeout=_DOWNLOAD_TIMEOUT_S
            )
    except subprocess.TimeoutExpired as e:
        raise LocalServerError(
            f"Downloading Neo4j from Maven Central took over {_DOWNLOAD_TIMEOUT_S}s; "
            f"check the network and see {log}."
        ) from e
    except OSError as e:
        raise LocalServerError(f"Could not run Maven ({maven}): {e}") from e
    if result.returncode != 0 or not partial.is_file():
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        raise LocalServerError(
            f"Downloading Neo4j {settings.neo4j_version} from Maven Central failed "
            f"(Maven exit {result.returncode}). Check network access to Maven Central and the "
            f"version (FLOWSTATE_LOCAL_NEO4J_VERSION). Maven said:\n{tail}\n(full log: {log})"
        )
    partial.replace(settings.classpath_file)
