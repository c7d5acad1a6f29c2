"""`perfgym validate` and `perfgym eval --candidates-from` on PerfCodeBench-layout fixtures:
limits, TIMEOUT, the reference's direction, rows written as produced, published candidates."""

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from cli_helpers import perfgym

FIXTURES = Path(__file__).parents[1] / "fixtures" / "perfcodebench"
TREE = FIXTURES / "published" / "executable_tasks"


@pytest.fixture
def visible_dir():
    """A scratch directory sandboxed runs can read (they do not see the host's /tmp)."""
    path = Path(tempfile.mkdtemp(prefix=".scratch-", dir=FIXTURES))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_time_limit_shows_timeout_and_rows_are_written(tmp_path):
    out = tmp_path / "rows.jsonl"
    p = perfgym("validate", TREE, "--task", "py_range_sums", "--repeats", "1",
                "--time-limit", "0.05", "--out", out)  # fmt: skip
    assert p.returncode == 1, p.stderr[-3000:]
    assert "baseline:TIMEOUT" in p.stdout and "TIMEOUT" in p.stdout, p.stdout
    assert "timing unavailable" not in p.stdout
    header, row = [json.loads(line) for line in out.read_text().splitlines()]
    assert header["validation"]["time_limit_s"] == 0.05
    assert row["task_id"] == "py_range_sums" and row["ok"] is False
    # The published runs ordered them; a timed-out baseline decides nothing.
    assert row["published_speedup"] > 1 and row["direction"] == "undecided"


def test_a_slower_reference_is_called_slower(visible_dir):
    """Baseline and reference swapped: the reference is significantly *slower*, and the message
    gives the table's speedup Tb/Tr (< 1), not the comparison's ratio Tr/Tb; the published
    results (kept) ordered them the other way, so the run disagrees with them and says so."""
    task = visible_dir / "executable_tasks" / "py_range_sums"
    shutil.copytree(TREE / "py_range_sums", task)
    fast, slow = (
        (task / "reference" / "solution.py").read_text(),
        (task / "baseline" / "solution.py").read_text(),
    )
    (task / "baseline" / "solution.py").write_text(fast)
    (task / "reference" / "solution.py").write_text(slow)
    p = perfgym("validate", task.parent, "--repeats", "5", "--json")
    assert p.returncode == 1, p.stderr[-3000:]
    (row,) = json.loads(p.stdout)["tasks"]
    (problem,) = row["problems"]
    assert problem.startswith("reference significantly slower (speedup 0.")
    assert row["speedup"] < 1
    assert row["published_speedup"] > 1 and row["direction"] == "disagree"
    assert json.loads(p.stdout)["agreement"]["all"] == {"agree": 0, "disagree": 1, "undecided": 0}


def test_candidates_from_agrees_with_the_published_status(tmp_path):
    """The published candidates of py_range_sums judged here: correct where the published run
    says ok, NX where the model produced nothing."""
    results = {}
    for model in ("fast-model", "hasty-model", "silent-model"):
        p = perfgym("eval", TREE, "--task", "py_range_sums", "--candidates-from", model,
                    "--repeats", "1", "--no-store", "--no-report", "--json",
                    "--out", tmp_path / f"{model}.jsonl")  # fmt: skip
        assert p.returncode == 0, p.stderr[-3000:]
        (row,) = json.loads(p.stdout)["models"]
        results[model] = row["stages"]
    published = {
        m: json.loads((TREE / "py_range_sums/candidate" / m / "eval_result.json").read_text())
        for m in results
    }
    for model, stages in results.items():
        want = "OK" if published[model]["candidate"]["status"] == "ok" else "NX"
        assert stages == {want: 1}, (model, stages)


def test_interrupt_keeps_the_finished_rows(tmp_path):
    """Ctrl-C during the second task: the first task's row is in --out and printed, exit 130."""
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "rows.jsonl"
    tree = FIXTURES / "executable_tasks"
    proc = subprocess.Popen(
        [sys.executable, "-m", "perfgym", "validate", str(tree), "--task", "py_range_sums",
         "--task", "java_distinct_count", "--repeats", "5", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and not (out.exists() and out.read_text().count("\n") > 1):
        time.sleep(0.2)
    assert out.exists(), "the first task never finished"
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr[-3000:]
    assert "interrupted after 1 of 2 tasks" in stderr
    assert "py_range_sums" in stdout
    _, row = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["task_id"] == "py_range_sums"


def test_candidates_from_a_sample_is_compared_with_the_published_results(tmp_path, visible_dir):
    """--sample/--seed pick the tasks; each candidate is compared with the model's
    eval_result.json (correct there and here; faster than the baseline there and here), and a
    candidate whose shipped source does not do what was published is named with both sides."""
    args = ["--candidates-from", "fast-model", "--repeats", "3", "--no-store", "--no-report",
            "--json"]  # fmt: skip
    p = perfgym("eval", TREE, "--sample", "1", "--seed", "3", *args, "--out", tmp_path / "a")
    assert p.returncode == 0, p.stderr[-3000:]
    agreed = json.loads(p.stdout)["published_agreement"]
    assert agreed["tasks"] == 1 and agreed["correct"] == {"agree": 1, "disagree": 0}
    (call,) = agreed["calls"]
    assert call["published_status"] == "ok" and call["published_ratio"] < 1

    task = visible_dir / "executable_tasks" / "py_range_sums"
    shutil.copytree(TREE / "py_range_sums", task)
    (task / "candidate" / "fast-model" / "solution.py").write_text("raise SystemExit(3)\n")
    p = perfgym("eval", task.parent, *args[:-1], "--out", tmp_path / "b")
    assert p.returncode == 0, p.stderr[-3000:]
    assert "disagrees on correctness: py_range_sums: here NR, published ok" in p.stdout, p.stdout
