"""The library and the benchmarks are two distributions: the library ships no benchmark code,
and neither it nor its tests import the benchmarks."""

from __future__ import annotations

import ast
import zipfile
from pathlib import Path

from click.testing import CliRunner

from flowstate.cli.plugins import INSTALL_HINTS, _missing

ROOT = Path(__file__).resolve().parents[2]


def _imported_modules(folder: Path) -> set[tuple[str, str]]:
    found = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {(str(path), alias.name) for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                found.add((str(path), node.module))
    return found


def test_library_and_its_tests_never_import_the_benchmarks() -> None:
    for folder in (ROOT / "flowstate", ROOT / "tests"):
        offenders = sorted(
            f"{path}: {module}"
            for path, module in _imported_modules(folder)
            if module.split(".")[0] == "flowstate_bench" or module.startswith("flowstate_bench")
        )
        assert offenders == []


def test_library_wheel_holds_no_benchmark_fuzz_or_fault_module(tmp_path: Path) -> None:
    from hatchling.builders.wheel import WheelBuilder

    [wheel] = list(WheelBuilder(str(ROOT)).build(directory=str(tmp_path), versions=["standard"]))
    names = zipfile.ZipFile(wheel).namelist()
    assert "flowstate/engine/agent.py" in names
    assert "flowstate/_cypher/schema.cypher" in names
    # tiktoken's o200k and cl100k files with their licence: token counts without litellm.
    o200k, cl100k = (
        "fb374d419588a4632f3f557e76b4b70aebbca790",
        "9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
    )
    for shipped in (o200k, cl100k, "LICENSE"):
        assert f"flowstate/_tiktoken/{shipped}" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    modules = [n for n in names if n.endswith(".py")]
    offenders = [
        n
        for n in modules
        if n.startswith(("flowstate_bench/", "flowstate_bench/"))
        or any(word in Path(n).name for word in ("fuzz", "fault", "tau", "bench"))
    ]
    assert offenders == []


def test_bench_without_the_benchmarks_installed_says_how_to_install() -> None:
    result = CliRunner().invoke(_missing("bench", INSTALL_HINTS["bench"]), ["--quick"])
    assert result.exit_code == 2
    assert "pip install ./bench" in result.output
