"""ENAMEL's protocol on real problems: references score ~1, slow canonical code times out."""

import pytest

from perfgym.enamel.protocol import evaluate
from perfgym.metrics.enamel import EnamelConfig, enamel_eff_at_k, enamel_pass_at_k
from perfgym.sandbox.pyworker import PythonWorkerPool
from perfgym.tasks import load_suite


@pytest.fixture(scope="module")
def problems():
    suite = load_suite("enamel")
    # HumanEval/55 (fib): the canonical recursion is exponential; /1 is linear in both.
    return [suite.get("HumanEval/55"), suite.get("HumanEval/1")]


@pytest.fixture(scope="module")
def workers():
    with PythonWorkerPool() as pool:
        yield pool


def test_reference_scores_close_to_one(problems, workers):
    ps, traces = evaluate(problems, "enamel-reference", workers, repeats=6)
    eff = enamel_eff_at_k(ps, EnamelConfig(k=1))
    assert all(t.correct and t.stopped == "" for t in traces), traces
    # The reference against its own re-measurement: ~1 (sub-millisecond calls on a loaded
    # 2-core machine swing by tens of percent; a broken protocol gives ~0 or >> 1).
    assert 0.5 <= eff.value <= 1.5, traces


def test_exponential_canonical_times_out_and_scores_low(problems, workers):
    ps, traces = evaluate(problems, "humaneval-canonical", workers, repeats=6)
    fib = next(t for t in traces if t.task_id == "HumanEval/55")
    assert fib.correct and fib.stopped.startswith("timeout at level")
    assert fib.level_times_s[-1] is None
    p = {x.task_id: x for x in ps}["HumanEval/55"]
    assert enamel_eff_at_k([p], EnamelConfig(k=1)).value < 0.5
    assert enamel_pass_at_k(ps, EnamelConfig(k=1)).value == 1.0


def test_wrong_solution_zeroes_every_level(problems, workers):
    task = problems[1].model_copy(deep=True)
    task.pool[0].source = f"def {task.entry_point}(*args):\n    return []\n"
    ps, traces = evaluate([task], "humanevalplus-canonical", workers, repeats=2)
    assert not traces[0].correct and traces[0].level_times_s == [None] * 4
    assert enamel_eff_at_k(ps, EnamelConfig(k=1)).value == 0.0
