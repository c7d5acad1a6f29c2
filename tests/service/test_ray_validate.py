"""`perfgym validate --backend ray` on the session's two-node Ray cluster gives the rows the
local pool gives (every solution's stage, the published ratio) for a small PerfCodeBench-layout
sample, and sums the cluster's cores for its floor."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
pytest.importorskip("ray", reason="the Ray backend needs ray installed")

from typer.testing import CliRunner  # noqa: E402

from perfgym.cli import app  # noqa: E402
from perfgym.judge import Judge, JudgeConfig  # noqa: E402
from perfgym.judge.validate import validate_task  # noqa: E402
from perfgym.tasks.suite import load_suite  # noqa: E402

pytestmark = pytest.mark.slow
TREE = Path(__file__).parents[1] / "fixtures" / "perfcodebench" / "published" / "executable_tasks"
TASKS = ("cpp_topk_sum", "py_range_sums")


def _essence(row: dict) -> tuple:
    return (row["task_id"], [(c["label"], c["stage"], c["detail"]) for c in row["solutions"]],
            row["published_speedup"], row["skipped"])  # fmt: skip


def test_ray_validation_gives_the_local_rows(ray_cluster, tmp_path):
    args = ["validate", str(TREE), *(x for t in TASKS for x in ("--task", t)), "--repeats", "3",
            "--backend", "ray", "--json", "--out", str(tmp_path / "ray.jsonl")]  # fmt: skip
    r = CliRunner().invoke(app, args)
    assert r.exit_code in (0, 1), r.stderr[-3000:]  # 1: a task whose speedup is not significant
    got = json.loads(r.stdout)
    assert got["backend"] == "ray" and got["summary"]["cores"] >= 2
    assert got["summary"]["ran"] == len(TASKS) and got["summary"]["floor_s"] > 0
    suite = load_suite(str(TREE), tasks=list(TASKS))
    with Judge(JudgeConfig(repeats=3)) as judge:
        local = [validate_task(judge, t).model_dump(mode="json") for t in suite.tasks]
    assert sorted(_essence(x) for x in got["tasks"]) == sorted(_essence(x) for x in local)
    assert all(c["stage"] == "OK" for x in got["tasks"] for c in x["solutions"])
