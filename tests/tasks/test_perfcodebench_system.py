"""PerfCodeBench's packaged external libraries come from the system: the recipe is rewritten
to link the installed package, the user's own external/ copy always wins, and the swap can be
turned off. The real build runs only where the package is installed (scripts/setup pcb)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from perfgym.judge import Judge, JudgeConfig, Stage
from perfgym.judge.validate import validate_task
from perfgym.tasks import load_suite
from perfgym.tasks import perfcodebench_system as system
from perfgym.tasks.perfcodebench_external import EXTERNAL_ENV
from perfgym.tasks.task import BuildSpec

FIXTURES = Path(__file__).parents[1] / "fixtures" / "perfcodebench"
TREE = FIXTURES / "published" / "executable_tasks"
STUB = FIXTURES / "external_stub"
SO = "/usr/lib/x86_64-linux-gnu/liblz4.so"

RECIPE = BuildSpec(
    compiler="g++",
    cxxflags=["-O3", "-I{task_dir}/harness", "-I{root}/external/lz4/lib", "-I",
              "{root}/external/lz4", "-I{root}/external/lz4_evil/lib"],
    sources=["{task_dir}/harness/benchmark_main.cpp", "{variant_dir}/solution.cpp",
             "{root}/external/lz4/lib/lz4.c", "{root}/external/lz4_evil/lib/x.c"],
)  # fmt: skip


@pytest.fixture
def lz4_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rewrite's rule, independent of what this machine has installed."""
    monkeypatch.setattr(system, "installed", lambda folder: ("liblz4-dev", "1.9.4-1")
                        if folder == "lz4" else None)  # fmt: skip
    monkeypatch.setattr(system, "_shared_object", lambda name: Path(SO))
    monkeypatch.delenv(system.SYSTEM_ENV, raising=False)


def test_the_packaged_library_replaces_its_external_sources_and_flags(lz4_installed: None) -> None:
    build, swapped = system.use_system_libraries(RECIPE, external=None)
    assert swapped == {"lz4": "liblz4-dev 1.9.4-1"}
    # Both -I forms of lz4 go; a folder whose name only starts with lz4 is not lz4's.
    assert build.cxxflags == ["-O3", "-I{task_dir}/harness", "-I{root}/external/lz4_evil/lib"]
    assert build.sources == ["{task_dir}/harness/benchmark_main.cpp", "{variant_dir}/solution.cpp",
                             "{root}/external/lz4_evil/lib/x.c", SO]  # fmt: skip


def test_the_users_own_copy_wins_and_the_swap_can_be_turned_off(
    lz4_installed: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "lz4").mkdir()
    assert system.use_system_libraries(RECIPE, external=tmp_path) == (RECIPE, {})
    monkeypatch.setenv(system.SYSTEM_ENV, "0")
    assert system.use_system_libraries(RECIPE, external=None) == (RECIPE, {})


def test_unpackaged_libraries_are_never_swapped() -> None:
    for folder in system.USER_SUPPLIED:
        assert folder not in system.SYSTEM_LIBRARIES
        assert system.installed(folder) is None


@pytest.mark.slow
@pytest.mark.skipif(system.installed("xxhash") is None,
                    reason="libxxhash-dev is not installed (scripts/setup pcb)")  # fmt: skip
def test_a_task_needing_xxhash_builds_against_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(EXTERNAL_ENV, raising=False)
    monkeypatch.delenv(system.SYSTEM_ENV, raising=False)
    task = load_suite(TREE, tasks=["cpp_xxh_count"]).get("cpp_xxh_count")
    assert task.metadata["system_libraries"]["xxhash"].startswith("libxxhash-dev ")
    assert "external" not in task.metadata
    with Judge(JudgeConfig(repeats=1, cores=[0])) as judge:
        row = validate_task(judge, task)
    assert [c.stage for c in row.solutions] == [Stage.OK, Stage.OK], row


def test_setup_pcb_installs_exactly_the_packaged_libraries() -> None:
    """scripts/setup pcb and the loader name the same packages (neither drifts alone)."""
    text = (Path(__file__).parents[2] / "scripts" / "setup").read_text()
    block = text.split("for pkg in", 1)[1].split("; do", 1)[0]
    assert sorted(block.replace("\\", " ").split()) == sorted(system.PACKAGES)


def test_a_malformed_switch_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from perfgym.cli import app

    monkeypatch.setenv(system.SYSTEM_ENV, "maybe")
    result = CliRunner().invoke(app, ["validate", str(TREE), "--task", "cpp_xxh_count"])
    assert result.exit_code == 2, result.output
    assert "PERFGYM_PCB_SYSTEM_LIBS='maybe': use 1 (the default) or 0" in result.output
    assert len(result.output.strip().splitlines()) == 1


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("PERFGYM_PERFCODEBENCH"),
                    reason="PERFGYM_PERFCODEBENCH (a PerfCodeBench checkout's executable_tasks/) "
                    "is not set; the published repository is not on this machine")  # fmt: skip
def test_real_repository_only_unpackaged_libraries_stay_unsupported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With every packaged library installed and no external folder, the only C++ tasks that
    do not load are those needing simdutf, yyjson or is_utf8, and each says to use --external."""
    missing = [f for f in system.SYSTEM_LIBRARIES if system.installed(f) is None]
    if missing:
        pytest.skip(f"not installed here: {', '.join(missing)} (scripts/setup pcb)")
    monkeypatch.delenv(EXTERNAL_ENV, raising=False)
    monkeypatch.delenv(system.SYSTEM_ENV, raising=False)
    suite = load_suite(os.environ["PERFGYM_PERFCODEBENCH"])
    for entry in suite.metadata["skipped"]:
        assert entry["kind"] == "unsupported", entry
        assert any(f"external/{lib}" in entry["reason"] for lib in system.USER_SUPPLIED), entry
        assert "--external" in entry["reason"], entry
    used = {lib for t in suite.tasks for lib in t.metadata.get("system_libraries", {})}
    assert used == set(system.SYSTEM_LIBRARIES)
