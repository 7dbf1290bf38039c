"""The jar download runs Maven once even when two starts ask for it at the same moment.
Maven is faked by a script that takes a second, counts its runs and writes the class path."""

from __future__ import annotations

import stat
import threading
from pathlib import Path

from flowstate.local.jars import ensure_classpath
from flowstate.settings import LocalServerSettings


def _fake_maven(tmp_path: Path) -> tuple[Path, Path]:
    jar = tmp_path / "neo4j.jar"
    jar.write_text("not really a jar")
    runs = tmp_path / "runs"
    maven = tmp_path / "mvn"
    maven.write_text(
        "#!/bin/sh\n"
        f"echo run >> {runs}\n"
        "sleep 1\n"
        'for arg in "$@"; do case "$arg" in\n'
        f"  -Dmdep.outputFile=*) printf '%s' {jar} > \"${{arg#-Dmdep.outputFile=}}\";;\n"
        "esac; done\n"
    )
    maven.chmod(maven.stat().st_mode | stat.S_IEXEC)
    return maven, runs


def test_two_concurrent_first_starts_download_once(tmp_path: Path) -> None:
    maven, runs = _fake_maven(tmp_path)
    settings = LocalServerSettings(cache_dir=tmp_path / "cache", maven=str(maven))
    results: list[tuple[list[Path], bool]] = []
    threads = [
        threading.Thread(target=lambda: results.append(ensure_classpath(settings, tmp_path)))
        for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(results) == 2
    assert runs.read_text().count("run") == 1
    assert all(jars == [tmp_path / "neo4j.jar"] for jars, _ in results)
    assert sorted(downloaded for _, downloaded in results) == [False, True]
    again, downloaded = ensure_classpath(settings, tmp_path)
    assert again == [tmp_path / "neo4j.jar"] and not downloaded
