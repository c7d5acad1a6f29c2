"""`perfgym optimize perfgym-core --model scripted`: the history per step in the store, the best
candidate reaching the reference, a candidates file `perfgym eval` reads, the curves' figures."""

from __future__ import annotations

import json

import pytest
from optimize_helpers import ITERATIONS, TASK, core_task

from perfgym.evaluation.candidates_file import read_candidates
from perfgym.judge.same_source import normalised
from perfgym.store.optimize_history import OptimizeHistory
from perfgym.tasks.suite import load_suite

# These tests build the session's reference run (`core_run`), whose significance calls
# tests/optimize/test_resume.py compares a resumed run's with: made alone, as that one is.
pytestmark = pytest.mark.alone


def _run_id(store):  # type: ignore[no-untyped-def]
    h = OptimizeHistory(store)
    (run,) = [r[0] for r in h._conn.execute("SELECT run FROM optimize_runs")]
    return h, run


def test_every_step_is_in_the_store(core_run):
    store, _, _ = core_run
    h, run = _run_id(store)
    steps = [s for s in h.steps(run) if s.slot >= 0]
    assert [s.iteration for s in steps] == list(range(1, ITERATIONS + 1))
    for s in steps:
        assert s.task_id == TASK and s.judged
        assert s.template_id and len(s.template_hash) == 64 and s.call_key
        assert s.answer and s.verdict is not None and s.why
        assert s.stage == s.verdict["stage"]
    accepted = [s for s in steps if s.accepted]
    assert accepted, "the pool member and the reference beat the baseline"
    for s in accepted:  # each accepted step carries its ratio and its CI, all below 1
        assert s.ratio is not None and s.ratio < 1
        assert s.ci_low is not None and s.ci_high is not None and s.ci_high < 1
    # The script's broken and wrong proposals got their stages, and were not accepted.
    stages = {s.stage for s in steps if not s.accepted}
    assert {"NC", "WO"} <= stages
    state, summary = h.run_state(run)  # type: ignore[misc]
    assert state == "done" and len(summary["iterations"]) == ITERATIONS


def test_the_best_reaches_the_reference(core_run):
    _, out, _ = core_run
    lines = [json.loads(x) for x in (out / "best.jsonl").read_text().splitlines()]
    (best,) = lines
    task = core_task(TASK)
    assert task.reference is not None
    assert normalised(best["source"], "c") == normalised(task.reference.source, "c")
    doc = json.loads((out / "optimize.json").read_text())
    last = doc["iterations"][-1]
    assert last["pass_at_1"] == 1.0 and last["fbr"] == 1.0 and last["rbr"] == 1.0
    assert last["median_speedup"] > 1.5
    first = doc["iterations"][0]
    assert first["iteration"] == 1 and first["median_speedup"] < last["median_speedup"]
    # perfgym eval --candidates reads the file as it is.
    cands, problems = read_candidates(out / "best.jsonl", load_suite("perfgym-core"))
    assert not problems and [c.task.id for c in cands] == [TASK]


def test_a_rerun_without_resume_is_refused_and_resume_of_a_finished_run_asks_nothing(core_run):
    from optimize_helpers import optimize_args, run_cli

    store, out, _ = core_run
    h, run = _run_id(store)
    before = [(s.iteration, s.slot, s.verdict) for s in h.steps(run)]
    again = run_cli(*optimize_args(store, out))
    assert again.returncode == 2 and "--resume" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1
    resumed = run_cli(*optimize_args(store, out, "--resume"))
    assert resumed.returncode == 0, resumed.stderr
    assert [(s.iteration, s.slot, s.verdict) for s in h.steps(run)] == before
