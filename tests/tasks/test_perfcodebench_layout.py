"""The PerfCodeBench layout: the fixtures load as published, and broken tasks fail clearly."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from perfgym.errors import TaskFormatError
from perfgym.tasks import Language, Suite, TaskKind, load_candidates, load_suite, plan_harness
from perfgym.tasks.perfcodebench import family_of, load_task

EXECUTABLE_TASKS = Path(__file__).resolve().parents[1] / "fixtures/perfcodebench/executable_tasks"


def test_fixtures_cover_six_languages_and_three_build_forms(pcb_fixtures: Suite) -> None:
    languages = {t.id: t.language for t in pcb_fixtures.tasks}
    assert languages == {
        "c_popcount_sum": Language.C,
        "cpp_topk_sum": Language.CPP,
        "cuda_sum_reduce": Language.CUDA,
        "go_group_sum": Language.GO,
        "java_distinct_count": Language.JAVA,
        "py_range_sums": Language.PYTHON,
    }
    forms = {}
    for task in pcb_fixtures.tasks:
        assert task.kind is TaskKind.HARNESS and task.oracle.kind == "harness"
        assert task.harness is not None and task.root == EXECUTABLE_TASKS / task.id
        build = task.harness.build
        forms[task.id] = "skip" if build.skip else "command" if build.command else "compile"
    assert forms["c_popcount_sum"] == forms["cpp_topk_sum"] == forms["cuda_sum_reduce"] == "compile"
    assert forms["go_group_sum"] == forms["java_distinct_count"] == "command"
    assert forms["py_range_sums"] == "skip"


def test_instance_fields_map_onto_the_task(pcb_fixtures: Suite) -> None:
    task = pcb_fixtures.get("java_distinct_count")
    instance = json.loads((task.root / "instance.json").read_text())  # type: ignore[operator]
    assert (task.title, task.goal, task.metric, task.correctness_rule) == (
        instance["title"],
        instance["goal"],
        instance["metric"],
        instance["correctness_rule"],
    )
    assert task.allowed_external_includes == ["java.util"]
    assert task.harness is not None and task.harness.solution_filename == "Solution.java"
    assert task.harness.run_argv == ["java", "-cp", "{build_dir}", "Main"]
    assert task.interface.startswith("public final class Solution")  # harness/interface.txt
    assert task.baseline.source == (task.root / "baseline" / "Solution.java").read_text()  # type: ignore[operator]
    assert task.metadata["language"] == "Java" and task.metadata["candidates"] == []
    # No solution_filename: PerfCodeBench's default, and the language comes from it.
    topk = pcb_fixtures.get("cpp_topk_sum")
    assert topk.harness is not None and topk.harness.solution_filename == "solution.cpp"
    assert "language" not in topk.metadata and topk.language is Language.CPP
    assert family_of("cuda_cub_add_reduce_i32_v12") == "cuda_cub_add_reduce_i32"


def test_published_results_become_stored_measurements(pcb_fixtures: Suite) -> None:
    task = pcb_fixtures.get("cpp_topk_sum")
    result = json.loads(
        (EXECUTABLE_TASKS / "cpp_topk_sum/candidate/fast-model/eval_result.json").read_text()
    )
    for solution, section in ((task.baseline, "baseline"), (task.reference, "reference")):
        assert solution is not None and solution.stored is not None
        stored = solution.stored
        assert stored.status == "ok" and stored.all_ok is True
        assert stored.median_s == result[section]["median_elapsed_ns"] / 1e9
        assert stored.samples_s == [ns / 1e9 for ns in result[section]["all_elapsed_ns"]]
        assert stored.source == f"cpp_topk_sum/candidate/fast-model/eval_result.json#{section}"
    assert pcb_fixtures.get("c_popcount_sum").baseline.stored is None


def test_candidates_are_read_with_their_results(pcb_fixtures: Suite) -> None:
    task = pcb_fixtures.get("cpp_topk_sum")
    assert task.metadata["candidates"] == ["fast-model", "silent-model", "wrong-model"]
    candidates = {c.model: c for c in load_candidates(task)}
    fast, silent, wrong = (
        candidates["fast-model"],
        candidates["silent-model"],
        candidates["wrong-model"],
    )
    assert (
        fast.source
        == (EXECUTABLE_TASKS / "cpp_topk_sum/candidate/fast-model/solution.cpp").read_text()
    )
    assert fast.candidate is not None and fast.candidate.status == "ok" and fast.error is None
    assert fast.variant_dir == EXECUTABLE_TASKS / "cpp_topk_sum/candidate/fast-model"
    assert wrong.candidate is not None and wrong.candidate.status == "error"
    assert wrong.error is not None and "exit status 1" in wrong.error
    assert silent.source is None and silent.source_path is None
    assert silent.candidate is not None and silent.candidate.status == "missing_candidate"
    assert load_candidates(pcb_fixtures.get("go_group_sum")) == []


def test_harness_plans_follow_the_published_runner(pcb_fixtures: Suite, tmp_path: Path) -> None:
    c_task = pcb_fixtures.get("c_popcount_sum")
    plan = plan_harness(
        c_task, variant_dir=EXECUTABLE_TASKS / "c_popcount_sum/reference", build_dir=tmp_path
    )
    harness = str(EXECUTABLE_TASKS / "c_popcount_sum/harness")
    assert plan.cwd == EXECUTABLE_TASKS.parent and plan.copies == []
    assert plan.build_argv == [
        "gcc", "-O2", "-std=c11", f"-I{harness}", f"{harness}/benchmark_main.c",
        str(EXECUTABLE_TASKS / "c_popcount_sum/reference/solution.c"), "-o", str(tmp_path / "bench"),
    ]  # fmt: skip
    assert plan.run_argv == [str(tmp_path / "bench")]
    go = plan_harness(pcb_fixtures.get("go_group_sum"), variant_dir="/v", build_dir="/b")
    assert [(c.source.name, c.target) for c in go.copies] == [
        ("main.go", Path("/b/main.go")),
        ("solution.go", Path("/b/solution.go")),
    ]
    assert go.copies[1].source == Path("/v/solution.go")
    assert go.build_argv == ["go", "build", "-o", "/b/bench", "/b/main.go", "/b/solution.go"]
    py = plan_harness(pcb_fixtures.get("py_range_sums"), variant_dir="/v", build_dir="/b")
    assert py.build_argv is None and py.run_argv[-1] == "/v/solution.py"


def test_load_suite_finds_executable_tasks_below_a_repository_root() -> None:
    suite = load_suite(EXECUTABLE_TASKS.parent)
    assert suite.metadata["format"] == "perfcodebench" and len(suite) == 6


# --- broken tasks: each mutation of a good task must fail with a message naming the problem ---


def _copy_task(tmp_path: Path, task_id: str = "cpp_topk_sum") -> Path:
    target = tmp_path / "executable_tasks" / task_id
    shutil.copytree(EXECUTABLE_TASKS / task_id, target)
    return target


def _edit_instance(task_dir: Path, change: Callable[[dict[str, Any]], None]) -> None:
    path = task_dir / "instance.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _expect_error(task_dir: Path, *fragments: str) -> None:
    """The task fails to load with a message naming the problem; the suite skips it, one entry
    with that message, and loads the rest."""
    with pytest.raises(TaskFormatError) as info:
        load_task(task_dir)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    suite = load_suite(task_dir.parent)
    assert task_dir.name not in suite.ids()
    (entry,) = [e for e in suite.metadata["skipped"] if e["task"] == task_dir.name]
    assert entry["kind"] == "failed" and entry["reason"] == message


def test_malformed_instance_json(tmp_path: Path) -> None:
    task_dir = _copy_task(tmp_path)
    (task_dir / "instance.json").write_text('{"task_id": "cpp_topk_sum", "title": ')
    _expect_error(task_dir, "'cpp_topk_sum'", "malformed", "instance.json")


def test_missing_files(tmp_path: Path) -> None:
    task_dir = _copy_task(tmp_path)
    (task_dir / "reference" / "solution.cpp").unlink()
    _expect_error(
        task_dir, "'cpp_topk_sum'", "missing reference solution", "reference/solution.cpp"
    )
    task_dir = _copy_task(tmp_path / "b")
    (task_dir / "harness" / "benchmark_main.cpp").unlink()
    _expect_error(task_dir, "build.sources: missing file", "benchmark_main.cpp")
    task_dir = _copy_task(tmp_path / "c", "py_range_sums")
    shutil.rmtree(task_dir / "harness")
    _expect_error(task_dir, "'py_range_sums'", "missing harness directory")


def test_unknown_placeholder(tmp_path: Path) -> None:
    task_dir = _copy_task(tmp_path)
    _edit_instance(task_dir, lambda d: d["build"]["cxxflags"].append("-I{tsk_dir}/harness"))
    _expect_error(task_dir, "'cpp_topk_sum'", "build.cxxflags", "unknown placeholder {tsk_dir}")
    task_dir = _copy_task(tmp_path / "b", "java_distinct_count")
    _edit_instance(task_dir, lambda d: d["run"]["argv"].append("{variant}"))
    _expect_error(task_dir, "run.argv", "{variant}")


def test_unknown_language(tmp_path: Path) -> None:
    task_dir = _copy_task(tmp_path)
    _edit_instance(task_dir, lambda d: d.update(language="Fortran"))
    _expect_error(task_dir, "'cpp_topk_sum'", "unknown language 'Fortran'")
    task_dir = _copy_task(tmp_path / "b")
    _edit_instance(task_dir, lambda d: d.update(solution_filename="solution.f90"))
    _expect_error(task_dir, "solution.f90", "names no known language")


def test_unknown_and_missing_fields(tmp_path: Path) -> None:
    task_dir = _copy_task(tmp_path)
    _edit_instance(task_dir, lambda d: d.update(difficulty="hard"))
    _expect_error(task_dir, "'cpp_topk_sum'", "unknown field 'difficulty'")
    task_dir = _copy_task(tmp_path / "b")
    _edit_instance(task_dir, lambda d: d["build"].update(linker="ld"))
    _expect_error(task_dir, "unknown field 'build.linker'")
    task_dir = _copy_task(tmp_path / "c")
    _edit_instance(task_dir, lambda d: d.pop("goal"))
    _expect_error(task_dir, "missing field 'goal'")
    task_dir = _copy_task(tmp_path / "d")
    _edit_instance(task_dir, lambda d: d["build"].update(skip=True))
    _expect_error(task_dir, "build must be exactly one of")


def test_duplicate_task_id(tmp_path: Path) -> None:
    task_dir = _copy_task(tmp_path)
    twin = task_dir.parent / "cpp_topk_sum_copy"
    shutil.copytree(task_dir, twin)  # same task_id in a second directory
    _expect_error(twin, "'cpp_topk_sum'", "must equal the directory name 'cpp_topk_sum_copy'")


def test_broken_eval_result(tmp_path: Path) -> None:
    task_dir = _copy_task(tmp_path)
    result_path = task_dir / "candidate" / "fast-model" / "eval_result.json"
    result = json.loads(result_path.read_text())
    result["baseline"]["status"] = "crashed"
    result_path.write_text(json.dumps(result))
    _expect_error(task_dir, "unknown status 'crashed'", "fast-model/eval_result.json#baseline")
    result_path.write_text("{not json")
    _expect_error(task_dir, "invalid JSON", "fast-model/eval_result.json")


def test_legacy_candidate_file_is_a_default_model(tmp_path: Path) -> None:
    task_dir = _copy_task(tmp_path)
    shutil.copy(task_dir / "reference" / "solution.cpp", task_dir / "candidate" / "solution.cpp")
    task = load_task(task_dir)
    assert task.metadata["candidates"][-1] == "default"
    legacy = [c for c in load_candidates(task) if c.model == "default"]
    assert len(legacy) == 1 and legacy[0].variant_dir == task_dir / "candidate"
