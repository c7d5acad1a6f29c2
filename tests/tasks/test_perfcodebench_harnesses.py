"""The PerfCodeBench fixtures are real benchmarks: each builds from its plan and self-checks.

Builds and runs every variant with the steps `plan_harness` derives from instance.json (plain
subprocesses: this tests the fixtures and the plan, not the sandbox). Speeds are not asserted
here; the harness's verdict and its JSON line are.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from perfgym.tasks import Suite, plan_harness

TIMEOUT_S = 120


def build_and_run(
    suite: Suite, task_id: str, variant_dir: Path, build_dir: Path
) -> tuple[int, Any]:
    task = suite.get(task_id)
    plan = plan_harness(task, variant_dir=variant_dir, build_dir=build_dir)
    for copy in plan.copies:
        shutil.copy2(copy.source, copy.target)
    if plan.build_argv is not None:
        built = subprocess.run(
            plan.build_argv, cwd=plan.cwd, capture_output=True, text=True, timeout=TIMEOUT_S
        )
        assert built.returncode == 0, built.stderr[-2000:]
    run = subprocess.run(
        plan.run_argv, cwd=plan.cwd, capture_output=True, text=True, timeout=TIMEOUT_S
    )
    lines = run.stdout.strip().splitlines()
    assert len(lines) == 1, run.stdout + run.stderr
    return run.returncode, json.loads(lines[0])


# C and Python build in well under a second; the JVM, Go and C++ builds are the slow tier.
@pytest.mark.parametrize(
    "task_id",
    [
        "c_popcount_sum",
        "py_range_sums",
        pytest.param("cpp_topk_sum", marks=pytest.mark.slow),
        pytest.param("java_distinct_count", marks=pytest.mark.slow),
        pytest.param("go_group_sum", marks=pytest.mark.slow),
    ],
)
@pytest.mark.parametrize("variant", ["baseline", "reference"])
def test_variant_builds_and_reports_ok(
    pcb_fixtures: Suite, task_id: str, variant: str, tmp_path: Path
) -> None:
    task = pcb_fixtures.get(task_id)
    assert task.root is not None
    code, report = build_and_run(pcb_fixtures, task_id, task.root / variant, tmp_path)
    assert code == 0 and report["ok"] is True
    assert isinstance(report["elapsed_ns"], int) and report["elapsed_ns"] > 0


def test_wrong_candidate_is_caught_by_the_harness(pcb_fixtures: Suite, tmp_path: Path) -> None:
    task = pcb_fixtures.get("cpp_topk_sum")
    assert task.root is not None
    wrong = task.root / "candidate" / "wrong-model"
    code, report = build_and_run(pcb_fixtures, "cpp_topk_sum", wrong, tmp_path)
    assert code == 1 and report["ok"] is False


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["baseline", "reference"])
def test_cuda_variant_compiles_and_runs_or_says_no_gpu(
    pcb_fixtures: Suite, variant: str, tmp_path: Path
) -> None:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")
    task = pcb_fixtures.get("cuda_sum_reduce")
    assert task.root is not None
    code, report = build_and_run(pcb_fixtures, "cuda_sum_reduce", task.root / variant, tmp_path)
    has_gpu = shutil.which("nvidia-smi") is not None and (
        subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0
    )
    if has_gpu:
        assert code == 0 and report["ok"] is True
    else:
        assert code == 2 and report == {"ok": False, "elapsed_ns": 0, "error": "no CUDA device"}
