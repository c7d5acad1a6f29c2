"""ENAMEL's results written as produced and resumed: a trace line rebuilds exactly the problem
`evaluate` scored (so reused and fresh problems score alike), and an interrupted run's
results file is reused problem by problem."""

from __future__ import annotations

import json

from perfgym.enamel.checkpoint import EnamelCheckpoint, problem_of
from perfgym.enamel.protocol import evaluate
from perfgym.sandbox.pyworker import PythonWorkerPool
from perfgym.store.checkpoint import ResumeFrom
from perfgym.store.results_file import HEADER_KEY
from perfgym.tasks.suite import load_suite

QUICK = ["HumanEval/3", "HumanEval/1"]  # two problems ENAMEL's canonical solutions pass quickly


def _tasks():
    suite = load_suite("enamel")
    by_id = {t.id: t for t in suite.tasks}
    return [by_id[i] for i in QUICK]


def test_a_trace_rebuilds_its_problem_and_a_resume_reuses_it(tmp_path):
    tasks = _tasks()
    out = tmp_path / "e.jsonl"
    fields = {"suite": "enamel", "protocol": "enamel", "repeats": 2}
    first = EnamelCheckpoint(out, tasks, ["humaneval-canonical"], header_fields=fields,
                             resume=ResumeFrom(explicit=True, prefix=""))  # fmt: skip
    with PythonWorkerPool() as workers:
        problems, traces = evaluate(tasks[:1], "humaneval-canonical", workers, repeats=2,
                                    finished=lambda tr: first.finished("humaneval-canonical", tr))  # fmt: skip
    assert [problem_of(t) for t in traces] == problems
    first.close()  # interrupted here: one of two problems written
    lines = out.read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[0])[HEADER_KEY]["complete"] is False

    again = EnamelCheckpoint(out, tasks, ["humaneval-canonical"], header_fields=fields,
                             resume=ResumeFrom(explicit=True, prefix=""))  # fmt: skip
    assert again.resumed_from == out and again.reused == 1
    assert [t.id for t in again.todo("humaneval-canonical", tasks)] == [QUICK[1]]
    assert again.results("humaneval-canonical") == (problems, traces)
    again.close()
    other = EnamelCheckpoint(out, tasks, ["humaneval-canonical"], header_fields={**fields, "repeats": 3},
                             resume=ResumeFrom(explicit=True, prefix=""))  # fmt: skip
    assert other.resumed_from is None and other.reused == 0  # another command: not resumed
    other.close()
    paired = EnamelCheckpoint(out, tasks, ["humaneval-canonical"],
                              header_fields={**fields, "timing": "paired"},
                              resume=ResumeFrom(explicit=True, prefix=""))  # fmt: skip
    assert paired.resumed_from is None  # another timing: not resumed
    paired.close()
