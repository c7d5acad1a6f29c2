"""SIGTERM stops `perfgym eval` and `perfgym validate` as Ctrl-C does: what finished is kept and
said in one line, the same eval again judges only the rest; the exit code is 143. And `eval
--time-limit` (shared with validate): every task's per-run limit, bad values one line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import one_line_error, perfgym
from small_tasks import sum_task
from typer.testing import CliRunner

from perfgym.cli import app
from perfgym.store.results_file import read_results
from perfgym.tasks.task import Solution

#: Each run sleeps (no CPU), so each task takes long enough to stop between tasks.
NAP = "import sys, time\ntime.sleep(0.02)\nd = sys.stdin.read().split()\nprint(sum(map(int, d[1:])))\n"
TASKS = 3


def _suite(root: Path, program: str = NAP, tasks: int = TASKS) -> Path:
    d = root / "suite"
    d.mkdir()
    lines = []
    for i in range(tasks):
        t = sum_task(f"nap-{i}").model_copy(update={
            "baseline": Solution(label="baseline", source=f"{program}# b{i}\n"),
            "references": [Solution(label="reference", source=f"{program}# r{i}\n")]})  # fmt: skip
        lines.append(t.model_dump_json() + "\n")
    (d / "tasks.jsonl").write_text("".join(lines))
    return d


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except OSError:
        return 0


def _terminate(args: list[str], out: Path, after: int) -> subprocess.CompletedProcess:
    """Start `perfgym ARGS`, wait until `out` holds `after` lines, send SIGTERM."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}
    p = subprocess.Popen([sys.executable, "-m", "perfgym", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
    deadline = time.monotonic() + 120
    while _lines(out) < after and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert p.poll() is None, "the run ended before it could be stopped"
    p.send_signal(signal.SIGTERM)
    stdout, stderr = p.communicate(timeout=120)
    return subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr)


def test_sigterm_mid_eval_keeps_the_finished_verdicts_and_a_rerun_resumes(tmp_path):
    suite, out, store = _suite(tmp_path), tmp_path / "o.jsonl", tmp_path / "s.sqlite"
    # three rounds: fewer than three would add an A/A noise band measurement to every task
    args = ["eval", str(suite), "--out", str(out), "--store", str(store), "--repeats", "3",
            "--no-report", "--json"]  # fmt: skip
    stopped = _terminate(args, out, after=1 + 2)  # header + one task's baseline and reference
    assert stopped.returncode == 143, stopped.stderr[-3000:]
    assert "Traceback" not in stopped.stderr
    said = [ln for ln in stopped.stderr.splitlines() if ln.startswith("terminated (SIGTERM):")]
    assert len(said) == 1 and "kept" in said[0] and str(out) in said[0], stopped.stderr
    kept = len(read_results(out)[1])
    assert 2 <= kept < 2 * TASKS
    again = perfgym(*args)
    assert again.returncode == 0, again.stderr[-3000:]
    summary = json.loads(again.stdout)
    assert summary["reused"] >= kept
    assert len(read_results(out)[1]) == 2 * TASKS


def test_sigterm_mid_validate_keeps_its_finished_rows(tmp_path):
    suite, rows = _suite(tmp_path), tmp_path / "rows.jsonl"
    args = ["validate", str(suite), "--repeats", "3", "--out", str(rows)]
    stopped = _terminate(args, rows, after=2)  # the header and one row
    assert stopped.returncode == 143, stopped.stderr[-3000:]
    assert "Traceback" not in stopped.stderr
    said = [ln for ln in stopped.stderr.splitlines() if ln.startswith("terminated (SIGTERM)")]
    assert len(said) == 1 and str(rows) in said[0], stopped.stderr
    header, *written = [json.loads(ln) for ln in rows.read_text().splitlines()]
    assert header["validation"]["repeats"] == 3
    assert 1 <= len(written) < TASKS and all(r["task_id"].startswith("nap-") for r in written)
    assert written[0]["task_id"] in stopped.stdout  # the finished rows are printed too


@pytest.mark.parametrize("command", ["eval", "validate"])
@pytest.mark.parametrize("value", ["abc", "0", "-1", "nan", "inf", "1e9", ""])
def test_bad_time_limits_are_one_line(tmp_path, command, value):
    suite = _suite(tmp_path, tasks=1)
    r = CliRunner().invoke(app, [command, str(suite), "--time-limit", value,
                                 "--out", str(tmp_path / "o.jsonl")])  # fmt: skip
    one_line_error(subprocess.CompletedProcess([], r.exit_code, r.stdout, r.stderr),
                   "--time-limit")  # fmt: skip
    assert not (tmp_path / "o.jsonl").exists()


def test_time_limit_with_published_is_refused(tmp_path):
    p = perfgym("eval", tmp_path, "--published", "--time-limit", "5")
    one_line_error(p, "--time-limit", "--published")


def test_eval_time_limit_is_every_tasks_limit(tmp_path):
    """A limit below the programs' 1 s of CPU times every one of them out (the limit is on CPU
    time), and the results file's header records the limit the verdicts were judged under."""
    spin = NAP.replace(
        "time.sleep(0.02)", "t = time.process_time()\nwhile time.process_time() - t < 1: pass"
    )
    suite, out = _suite(tmp_path, spin, tasks=1), tmp_path / "o.jsonl"
    handler = signal.getsignal(signal.SIGTERM)
    r = CliRunner().invoke(app, ["eval", str(suite), "--time-limit", "0.2", "--no-store",
                                 "--no-report", "--repeats", "3", "--out", str(out), "--json"])  # fmt: skip
    assert r.exit_code == 0, r.stderr[-3000:]
    assert signal.getsignal(signal.SIGTERM) is handler  # judging over: SIGTERM's own again
    header, verdicts = read_results(out)
    assert header["judge"]["time_limit_s"] == 0.2
    assert verdicts and all(v.detail == "TIMEOUT" for v in verdicts), [v.detail for v in verdicts]
