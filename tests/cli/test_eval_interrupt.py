"""Nothing lost: `perfgym eval` interrupted (SIGINT) or killed (SIGKILL) part-way keeps every
verdict it finished, in a valid results file, and the same command again reuses them, judges
only the rest and ends with the verdicts an uninterrupted run gives; a results file with a torn
or garbage line, or a store with an unreadable verdict, is said in one line and resumed anyway.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from small_tasks import sum_task
from typer.testing import CliRunner

from perfgym.cli import app
from perfgym.judge.verdict import Verdict
from perfgym.store.results_file import HEADER_KEY, read_results
from perfgym.tasks.task import Solution

#: Each run of these programs sleeps (no CPU), so a task takes long enough to interrupt between
#: tasks even on a loaded machine, and the suite still finishes in seconds.
NAP = (
    "import sys, time\ntime.sleep(0.1)\nd = sys.stdin.read().split()\nprint(sum(map(int, d[1:])))\n"
)
#: The same answers without the nap, for the tests that send no signal (a run judges ~8
#: programs a verdict: the nap alone is about half of such a test's time).
QUICK = "import sys\nd = sys.stdin.read().split()\nprint(sum(map(int, d[1:])))\n"
TASKS = 6


def _suite(root: Path, program: str = NAP) -> Path:
    """TASKS sum tasks whose baseline and reference are `program` (each its own bytes)."""
    d = root / "suite"
    d.mkdir()
    lines = []
    for i in range(TASKS):
        t = sum_task(f"nap-{i}")
        t = t.model_copy(update={"baseline": Solution(label="baseline", source=f"{program}# b{i}\n"),
                                 "references": [Solution(label="reference", source=f"{program}# r{i}\n")]})  # fmt: skip
        lines.append(t.model_dump_json() + "\n")
    (d / "tasks.jsonl").write_text("".join(lines))
    return d


def _args(suite: Path, out: Path, store: Path) -> list[str]:
    # --repeats 3: with 1 the judge would also measure every task's A/A noise band (4 x 5 naps
    # per workload), slower than three rounds
    return ["eval", str(suite), "--out", str(out), "--store", str(store), "--repeats", "3",
            "--no-report", "--json"]  # fmt: skip


def _cli(*args: str) -> subprocess.CompletedProcess:
    """`perfgym ARGS` in this process (quicker than a subprocess where no signal is sent)."""
    r = CliRunner().invoke(app, list(args))
    return subprocess.CompletedProcess(args, r.exit_code, r.stdout, r.stderr)


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except OSError:
        return 0


def _interrupt(args: list[str], out: Path, sig: int, after: int) -> subprocess.CompletedProcess:
    """Start `perfgym ARGS`, wait until `out` holds `after` verdict lines, send `sig`."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}
    # A shell starting jobs in the background ignores SIGINT for them, and the ignoring is
    # inherited: the child gets the default back, as a terminal's foreground command has it.
    p = subprocess.Popen([sys.executable, "-m", "perfgym", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    deadline = time.monotonic() + 120
    while _lines(out) < 1 + after and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert p.poll() is None, "the run ended before it could be interrupted"
    p.send_signal(sig)
    stdout, stderr = p.communicate(timeout=120)
    return subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr)


def _ident(v: Verdict) -> tuple[str, str, int, str]:
    return (v.task_id, v.model, v.sample, v.stage.value)


def _valid_partial(out: Path) -> list[Verdict]:
    """Every line a whole JSON record, the header first; the verdicts it keeps."""
    raw = out.read_bytes()
    lines = raw.split(b"\n")
    assert raw.endswith(b"\n"), "a torn last line"
    objs = [json.loads(ln) for ln in lines if ln]
    assert HEADER_KEY in objs[0] and objs[0][HEADER_KEY]["complete"] is False
    return [Verdict.model_validate(o) for o in objs[1:]]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """The verdict set an uninterrupted run of the suite gives."""
    root = tmp_path_factory.mktemp("whole")
    suite = _suite(root)
    p = _cli(*_args(suite, root / "o.jsonl", root / "s.sqlite"))
    assert p.returncode == 0, p.stderr[-3000:]
    return sorted(map(_ident, read_results(root / "o.jsonl")[1]))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["sigint", "sigkill"])
def test_interrupted_eval_keeps_and_reuses_every_finished_verdict(tmp_path, uninterrupted, sig):
    suite, out, store = _suite(tmp_path), tmp_path / "o.jsonl", tmp_path / "s.sqlite"
    args = _args(suite, out, store)
    stopped = _interrupt(args, out, sig, after=4)  # two of six tasks judged
    if sig == signal.SIGINT:
        assert stopped.returncode == 130, stopped.stderr[-3000:]
        assert "Traceback" not in stopped.stderr
        said = [ln for ln in stopped.stderr.splitlines() if ln.startswith("interrupted:")]
        assert len(said) == 1 and "kept" in said[0] and str(out) in said[0], stopped.stderr
    else:
        assert stopped.returncode == -signal.SIGKILL
    kept = _valid_partial(out)
    assert 4 <= len(kept) < 2 * TASKS

    again = _cli(*args)
    assert again.returncode == 0, again.stderr[-3000:]
    summary = json.loads(again.stdout)
    assert summary["reused"] == len(kept) and summary["judged"] == 2 * TASKS - len(kept)
    assert f"reused {len(kept)} of {2 * TASKS}" in again.stderr
    meta, final = read_results(out)
    assert meta["complete"] is True
    # Every verdict finished before the interrupt comes back as it was (its stored timings).
    by_id = {(v.task_id, v.model, v.sample): v for v in final}
    for v in kept:
        assert by_id[(v.task_id, v.model, v.sample)] == v
    assert sorted(map(_ident, final)) == uninterrupted


def test_a_finished_run_is_judged_afresh_and_no_resume_starts_over(tmp_path):
    """Only an unfinished run is resumed: the same command after a complete one measures again
    (use --replay to reuse), and --no-resume ignores an unfinished one."""
    suite, out, store = _suite(tmp_path, QUICK), tmp_path / "o.jsonl", tmp_path / "s.sqlite"
    args = _args(suite, out, store)
    assert _cli(*args).returncode == 0
    again = _cli(*args)
    assert json.loads(again.stdout)["reused"] == 0
    _unfinish(out, keep=4)
    fresh = _cli(*args, "--no-resume")
    assert json.loads(fresh.stdout)["reused"] == 0 and "resuming" not in fresh.stderr


def _unfinish(out: Path, *, keep: int, extra: list[bytes] = (), torn: bytes = b"") -> list[Verdict]:
    """Make `out` the file of a run cut short: header marked unfinished, `keep` verdicts, then
    `extra` raw lines and a `torn` tail without its newline."""
    lines = out.read_bytes().splitlines()
    head = json.loads(lines[0])
    head[HEADER_KEY]["complete"] = False
    body = lines[1 : 1 + keep]
    out.write_bytes(
        b"\n".join([json.dumps(head).encode(), *body[:2], *extra, *body[2:]]) + b"\n" + torn
    )
    return [Verdict.model_validate_json(b) for b in body]


def test_torn_and_garbage_lines_are_said_in_one_line_and_resumed(tmp_path, uninterrupted):
    suite, out, store = _suite(tmp_path, QUICK), tmp_path / "o.jsonl", tmp_path / "s.sqlite"
    args = [*_args(suite, out, store)[:-1], "--no-store"]
    assert _cli(*args).returncode == 0
    kept = _unfinish(out, keep=5, extra=[b"garbage {", b"[1, 2]"], torn=b'{"task_id": "nap-5", "st')
    again = _cli(*args)
    assert again.returncode == 0, again.stderr[-3000:]
    said = [ln for ln in again.stderr.splitlines() if "unreadable" in ln]
    assert len(said) == 1 and said[0].startswith("ignored 3 unreadable record(s)"), again.stderr
    assert "torn last line" in said[0] and "not JSON" in said[0]
    assert f"reused {len(kept)} of {2 * TASKS}" in again.stderr
    meta, final = read_results(out)
    assert meta["complete"] is True and sorted(map(_ident, final)) == uninterrupted


def test_store_fills_what_the_file_lost_and_an_unreadable_stored_verdict_is_skipped(tmp_path):
    """The store is written per task too: a verdict it holds for the interrupted run is reused
    when the results file lacks it; a stored verdict that no longer reads is judged again."""
    suite, out, store = _suite(tmp_path, QUICK), tmp_path / "o.jsonl", tmp_path / "s.sqlite"
    args = [*_args(suite, out, store)[:-1], "--json"]
    assert _cli(*args).returncode == 0
    _unfinish(out, keep=2)  # the file keeps 2 verdicts; the store has all of them
    with sqlite3.connect(store) as db:
        db.execute(
            "UPDATE verdicts SET verdict = 'garbage' WHERE id = (SELECT MAX(id) FROM verdicts)"
        )
        stored = db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]
    again = _cli(*args)
    assert again.returncode == 0, again.stderr[-3000:]
    summary = json.loads(again.stdout)
    said = [ln for ln in again.stderr.splitlines() if "unreadable" in ln]
    assert len(said) == 1 and said[0].startswith(f"store {store}: ignored 1"), again.stderr
    # Baseline and reference sources differ per task, so each verdict has its own key.
    assert stored == 2 * TASKS
    assert summary["reused"] == 2 * TASKS - 1 and summary["judged"] == 1


def test_enamel_interrupted_keeps_its_problem_results_and_resumes(tmp_path):
    """ENAMEL's protocol: SIGINT after the first problem's result; the rerun reuses it."""
    out = tmp_path / "e.jsonl"
    args = ["eval", "enamel", "--task", "HumanEval/3", "--task", "HumanEval/1", "--repeats", "2",
            "--out", str(out), "--no-report", "--json"]  # fmt: skip
    stopped = _interrupt(args, out, signal.SIGINT, after=1)
    assert stopped.returncode == 130 and "Traceback" not in stopped.stderr, stopped.stderr
    said = [ln for ln in stopped.stderr.splitlines() if ln.startswith("interrupted:")]
    assert len(said) == 1 and "problem results" in said[0], stopped.stderr
    kept = [json.loads(ln) for ln in out.read_text().splitlines()[1:]]
    assert len(kept) == 1
    again = _cli(*args)
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(again.stdout)["reused"] == len(kept)
    lines = [json.loads(ln) for ln in out.read_text().splitlines()]
    assert lines[0][HEADER_KEY]["complete"] is True
    assert [t["task_id"] for t in lines[1:]] == ["HumanEval/3", "HumanEval/1"]
    assert lines[1 : 1 + len(kept)] == kept  # the reused results exactly as they were written
