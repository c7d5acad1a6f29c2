"""`perfgym validate`: it judges a suite's own solutions and reports each task; a suite that
cannot be loaded is one line on stderr."""

import json

from cli_helpers import one_line_error, perfgym
from small_tasks import sum_task


def test_validate_reports_every_task_in_json(tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "tasks.jsonl").write_text(sum_task("sum-a").model_dump_json() + "\n")
    p = perfgym("validate", suite, "--repeats", "5", "--min-speedup", "0", "--json")
    assert p.returncode in (0, 1), p.stderr[-3000:]  # 1: the speed difference was not shown
    out = json.loads(p.stdout)
    assert out["suite"] == "suite"
    (task,) = out["tasks"]
    assert task["task_id"] == "sum-a"
    assert [s["label"] for s in task["solutions"]] == ["baseline", "reference"]
    assert all(s["stage"] == "OK" for s in task["solutions"])
    assert out["failed"] == ([] if p.returncode == 0 else ["sum-a"])


def test_validate_unknown_suite_is_one_line(tmp_path):
    one_line_error(perfgym("validate", tmp_path / "nowhere", timeout=60), "unknown suite")
