"""The published layout's edge cases: unknown statuses, external/ libraries, broken tasks,
per-task limits, and --task parsing only what it names."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

from perfgym.cli.suite_arg import SHOWN_PER_CAUSE, load_summary, skipped_lines
from perfgym.tasks import load_candidates, load_suite
from perfgym.tasks.perfcodebench_external import EXTERNAL_ENV
from perfgym.tasks.perfcodebench_system import SYSTEM_ENV

FIXTURES = Path(__file__).parents[1] / "fixtures" / "perfcodebench"
TREE = FIXTURES / "published" / "executable_tasks"
STUB = FIXTURES / "external_stub"


def test_without_external_the_rest_loads_and_each_skip_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(EXTERNAL_ENV, raising=False)
    monkeypatch.setenv(SYSTEM_ENV, "0")  # else xxhash may come from its Debian package
    suite = load_suite(TREE)
    assert suite.ids() == ["cpp_topk_sum", "py_range_sums"]
    skipped = {e["task"]: e for e in suite.metadata["skipped"]}
    assert skipped["cpp_utf8_count"]["kind"] == "unsupported"
    assert "needs external file external/simdutf/simdutf.cpp" in skipped["cpp_utf8_count"]["reason"]
    # Reached only through a -I flag: caught at load time, not at build time.
    assert skipped["cpp_xxh_count"]["kind"] == "unsupported"
    assert "include directory external/xxhash (-I" in skipped["cpp_xxh_count"]["reason"]
    assert skipped["c_broken_instance"]["kind"] == "failed"
    assert skipped["go_broken_result"]["kind"] == "failed"
    summary = load_summary(
        Counter(t.language.value for t in suite.tasks), suite.metadata["skipped"]
    )
    assert summary == (
        "loaded 2 (cpp 1, python 1); "
        "unsupported 2 (cpp: needs external file 1, cpp: needs external include directory 1); "
        "failed 2 (c: malformed 1, go: invalid JSON 1)"
    )


@pytest.mark.parametrize("how", ["argument", "environment"])
def test_external_folder_by_argument_or_environment(
    how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(EXTERNAL_ENV, raising=False)
    if how == "environment":
        monkeypatch.setenv(EXTERNAL_ENV, str(STUB))
        suite = load_suite(TREE)
    else:
        suite = load_suite(TREE, external=STUB)
    assert {"cpp_utf8_count", "cpp_xxh_count"} <= set(suite.ids())
    assert suite.metadata["external"] == str(STUB.resolve())


@pytest.mark.skipif(Path("/usr/include/xxhash.h").is_file(),
                    reason="the system provides xxhash.h (libxxhash-dev), so the task builds")  # fmt: skip
def test_a_header_absent_from_the_external_folder_is_unsupported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The -I directory exists but lacks the header the harness includes."""
    monkeypatch.delenv(EXTERNAL_ENV, raising=False)
    external = tmp_path / "ext"
    shutil.copytree(STUB, external)
    (external / "xxhash" / "xxhash.h").unlink()
    suite = load_suite(TREE, external=external, tasks=["cpp_xxh_count"])
    (entry,) = suite.metadata["skipped"]
    assert entry["kind"] == "unsupported" and "needs header 'xxhash.h'" in entry["reason"]


def test_task_selection_parses_only_what_it_names() -> None:
    """Two broken tasks in the tree; naming a good one never reads them."""
    suite = load_suite(TREE, tasks=["py_range_sums"])
    assert suite.ids() == ["py_range_sums"] and suite.metadata["skipped"] == []


def test_unknown_sections_are_not_results_and_limits_come_from_the_task() -> None:
    suite = load_suite(TREE, tasks=["py_range_sums", "cpp_topk_sum"])
    py, cpp = suite.get("py_range_sums"), suite.get("cpp_topk_sum")
    silent = {c.model: c for c in load_candidates(py)}["silent-model"]
    assert silent.candidate is not None and silent.candidate.status == "missing_candidate"
    assert silent.baseline is None and silent.reference is None  # `unknown`: not reported
    # The stored baseline is an ok one, whichever model's file has it.
    assert py.baseline.stored is not None and py.baseline.stored.status == "ok"
    assert py.time_limit_s == 30  # instance.json's benchmark_timeout_sec
    assert cpp.time_limit_s == 60  # none there: the longest its result files record


@pytest.mark.skipif(
    not os.environ.get("PERFGYM_PERFCODEBENCH"),
    reason="PERFGYM_PERFCODEBENCH (a PerfCodeBench checkout's executable_tasks/) is not set; "
    "the published repository is not on this machine",
)
def test_real_repository_loads_every_task_or_reports_it() -> None:
    """Every published task loads or is skipped with its reason; the counts are printed."""
    path = Path(os.environ["PERFGYM_PERFCODEBENCH"])
    suite = load_suite(path)
    skipped = suite.metadata["skipped"]
    dirs = [p for p in suite_root(path).iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert len(suite) + len(skipped) == len(dirs)
    print(load_summary(Counter(t.language.value for t in suite.tasks), skipped))


def suite_root(path: Path) -> Path:
    return path / "executable_tasks" if (path / "executable_tasks").is_dir() else path


def test_many_tasks_skipped_for_one_cause_print_a_few_lines_and_a_count() -> None:
    # The published repository skips 87 simdutf tasks for one reason: a new user should see a
    # few of them and how many more, not 87 lines; another cause keeps its own lines.
    simdutf = [
        {"kind": "unsupported", "task": f"simdutf_{i}", "language": "cpp",
         "reason": f"task 'simdutf_{i}': needs external file external/simdutf/simdutf.cpp "
                   "(external folder: none located)"}
        for i in range(87)
    ]  # fmt: skip
    broken = [{"kind": "failed", "task": "b", "language": "go", "reason": "task 'b': malformed"}]
    lines = skipped_lines(simdutf + broken)
    assert len(lines) == SHOWN_PER_CAUSE + 1 + 1
    assert [line for line in lines if "simdutf_" in line] == [
        f"[yellow]unsupported[/] {e['reason']}" for e in simdutf[:SHOWN_PER_CAUSE]
    ]
    assert "task 'b': malformed" in lines[SHOWN_PER_CAUSE]
    more = f"... and {87 - SHOWN_PER_CAUSE} more task(s): needs external file external/simdutf"
    assert more in lines[-1]
    # Every task is still counted in the summary line.
    assert "unsupported 87" in load_summary(Counter(), simdutf + broken)
