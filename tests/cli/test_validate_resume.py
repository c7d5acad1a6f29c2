"""`perfgym validate` at scale: `--sample N --seed S` draws the same tasks every time (one of
each language at least; CUDA left out of the draw without a GPU); Ctrl-C keeps every finished
row of `--out`, and `--resume` reuses them, judging only the rest; a file of another judge
configuration is refused in one line, as is an existing file without --resume/--no-resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from cli_helpers import one_line_error, perfgym
from small_tasks import sum_task

from perfgym.cli.validate_cmd import _select
from perfgym.tasks.suite import load_suite
from perfgym.tasks.task import Solution
from perfgym.toolchains.gpu import gpu_missing_reason

FIXTURES = Path(__file__).parents[1] / "fixtures" / "perfcodebench" / "executable_tasks"
#: Each run naps (no CPU): a task lasts long enough to interrupt between tasks.
NAP = "import sys, time\ntime.sleep(0.05)\nd = sys.stdin.read().split()\nprint(sum(map(int, d[1:])))\n"


def _suite(root: Path, tasks: int = 3) -> Path:
    d = root / "suite"
    d.mkdir()
    lines = []
    for i in range(tasks):
        t = sum_task(f"nap-{i}").model_copy(update={
            "baseline": Solution(label="baseline", source=f"{NAP}# b{i}\n"),
            "references": [Solution(label="reference", source=f"{NAP}# r{i}\n")]})  # fmt: skip
        lines.append(t.model_dump_json() + "\n")
    (d / "tasks.jsonl").write_text("".join(lines))
    return d


def test_the_sample_is_seeded_stratified_and_recorded():
    tasks = list(load_suite(str(FIXTURES)).tasks)
    first, drawn = _select(tasks, [], 4, 5)
    again, _ = _select(tasks, [], 4, 5)
    assert [t.id for t in first] == [t.id for t in again] == drawn["task_ids"]
    langs = Counter(t.language.value for t in first)
    assert sum(langs.values()) == 4 and max(langs.values()) == 1
    if gpu_missing_reason() is not None:
        assert "cuda" not in langs and drawn["cuda_left_out"] == 1
        assert drawn["population"] == len(tasks) - 1
    only, _ = _select(tasks, ["python,go"], 2, 0)
    assert sorted(t.language.value for t in only) == ["go", "python"]


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except OSError:
        return 0


def test_ctrl_c_keeps_the_rows_and_resume_judges_only_the_rest(tmp_path):
    suite, out = _suite(tmp_path), tmp_path / "rows.jsonl"
    args = ["validate", str(suite), "--repeats", "3", "--out", str(out)]
    # A shell starting jobs in the background ignores SIGINT for them: give the default back.
    p = subprocess.Popen([sys.executable, "-m", "perfgym", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=dict(os.environ),
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    deadline = time.monotonic() + 120
    while _lines(out) < 2 and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert p.poll() is None, "the run ended before it could be interrupted"
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode == 130, stderr[-3000:]
    assert "Traceback" not in stderr
    header, *kept = [json.loads(ln) for ln in out.read_text().splitlines()]
    assert 1 <= len(kept) < 3 and "validation" in header
    assert kept[0]["task_id"] in stdout  # the finished rows are printed too

    again = perfgym(*args, "--resume", "--json")
    assert again.returncode == 1, again.stderr[-3000:]  # one program twice: no speedup
    result = json.loads(again.stdout)
    assert result["reused"] == len(kept) and result["summary"]["ran"] == 3 - len(kept)
    assert [r["task_id"] for r in result["tasks"]] == ["nap-0", "nap-1", "nap-2"]
    reused = {r["task_id"]: r for r in result["tasks"]}[kept[0]["task_id"]]
    assert reused["solutions"] == kept[0]["solutions"]  # the row itself, not a new run
    rows = [json.loads(ln) for ln in out.read_text().splitlines()[1:]]
    assert sorted(r["task_id"] for r in rows) == ["nap-0", "nap-1", "nap-2"]

    other = perfgym("validate", suite, "--repeats", "5", "--out", out, "--resume")
    one_line_error(other, "holds another validation", "repeats")
    one_line_error(perfgym("validate", suite, "--out", out), "--resume", "--no-resume")
    one_line_error(perfgym("validate", suite, "--resume"), "--out")
    assert len(out.read_text().splitlines()) == 4  # nothing lost to a refusal
