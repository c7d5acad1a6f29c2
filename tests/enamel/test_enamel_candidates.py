"""ENAMEL's protocol on model samples: ENAMEL's rules for wrong and slow samples, missing
problems counted, and a program that fakes its own call timer gains nothing."""

import pytest

from perfgym.enamel.candidates import evaluate_candidates, sample_source
from perfgym.enamel.pairing import EnamelTiming
from perfgym.enamel.sample import TIMEOUT_RETRIED, evaluate_sample
from perfgym.judge.candidate import Candidate
from perfgym.metrics.enamel import EnamelConfig, enamel_eff_at_k, enamel_pass_at_k
from perfgym.metrics.enamel import sample_efficiency as score
from perfgym.tasks import load_suite


def _problem(task, ref, samples):
    from perfgym.metrics.enamel_levels import EnamelProblem

    n = len(ref.levels)
    return EnamelProblem(task_id=task.id, reference_times_s=ref.level_times_s,
                         level_limits_s=[ref.limit_s] * n, samples=samples)  # fmt: skip


def test_a_sample_right_on_small_inputs_but_wrong_on_large_ones_gets_nothing(task, ref, workers):
    # Level 0 carries no weight and earns no credit of its own: ENAMEL zeroes every level and
    # fails the sample when any level's answer is wrong.
    src = task.reference.source.replace(
        "    paren_string = paren_string.replace(' ', '')",
        "    if len(paren_string) > 1000:\n        return []\n"
        "    paren_string = paren_string.replace(' ', '')",
    )
    assert src != task.reference.source
    run = evaluate_sample(task, ref, src, workers, repeats=2)
    assert not run.sample.correct and run.stopped.startswith("wrong on L"), run.stopped
    assert not run.stopped.startswith("wrong on L0")
    p = _problem(task, ref, [run.sample])
    assert score(run.sample, p) == 0.0
    assert enamel_pass_at_k([p], EnamelConfig(k=1)).value == 0.0


def test_a_timeout_on_a_level_zeroes_it_and_later_ones_but_the_sample_passes(task, ref, workers):
    # Fast on level 0 (correctness only), far over the limit above it.
    src = task.reference.source.replace(
        "    paren_string = paren_string.replace(' ', '')",
        "    if len(paren_string) > 1000:\n        import time\n        time.sleep(1.0)\n"
        "    paren_string = paren_string.replace(' ', '')",
    )
    for timing in EnamelTiming:
        run = evaluate_sample(task, ref, src, workers, 2, timing)
        assert run.sample.correct and run.stopped.startswith("timeout at level 1"), run.stopped
        assert run.sample.level_times_s[0] is not None
        assert run.sample.level_times_s[1:] == [None] * 3
        # Paired: slow twice before the break; ENAMEL's order: once.
        assert (TIMEOUT_RETRIED in run.flags) == (timing is EnamelTiming.PAIRED)
    p = _problem(task, ref, [run.sample])
    assert enamel_pass_at_k([p], EnamelConfig(k=1)).value == 1.0
    assert score(run.sample, p) == 0.0


def test_a_patched_call_timer_does_not_make_a_slow_sample_fast(task, ref, workers):
    # Correct, but it burns CPU past the limit on every timed level, and patches the timer the
    # call child reads so that every call reports 0 ns. Believed, it would score above 1.
    burn = (
        "    if len(paren_string) > 1000:\n"
        f"        _end = time.process_time() + {ref.limit_s + 0.05}\n"
        "        while time.process_time() < _end:\n            pass\n"
    )
    slow = task.reference.source.replace(
        "    paren_string = paren_string.replace(' ', '')",
        burn + "    paren_string = paren_string.replace(' ', '')",
    )
    cheat = "import time\ntime.perf_counter_ns = lambda: 0\n" + slow
    run = evaluate_sample(task, ref, cheat, workers, repeats=2)
    assert run.sample.correct, run.stopped
    p = _problem(task, ref, [run.sample])
    assert score(run.sample, p) == 0.0, (run.stopped, run.sample.level_times_s)
    assert run.stopped.startswith("timeout at level 1"), run.stopped


def test_an_impossible_or_low_self_report_is_overruled_by_the_kernels_count():
    from perfgym.enamel.timer import GAP_SLACK_S, MISMATCH, call_time
    from perfgym.sandbox.execution import Status
    from perfgym.sandbox.pyworker import CallResult

    honest = CallResult(status=Status.OK, wall_s=0.5, reported_call_s=0.30, program_cpu_s=0.301)
    flags: list[str] = []
    assert call_time(honest, flags, reference_gap_s=0.001) == 0.30 and flags == []
    lying = honest.model_copy(update={"reported_call_s": 0.0})
    t = call_time(lying, flags, reference_gap_s=0.001)
    assert t == pytest.approx(0.301 - 0.001 - GAP_SLACK_S) and flags == [MISMATCH]
    forged = honest.model_copy(update={"reported_call_s": 9.0})  # above the outside wall
    assert call_time(forged, flags, reference_gap_s=0.001) < 0.5
    zero, flags = honest.model_copy(update={"reported_call_s": 0.0, "program_cpu_s": 0.0}), []
    assert call_time(zero, flags, reference_gap_s=0.001) == 0.0 and flags == [MISMATCH]


def test_memory_buys_no_allowance_where_the_exit_is_not_counted():
    """Where the outside count ends at the child's "result written" (the worker's cgroup), the
    exit's release of memory is not in it: a large peak RSS (allocated in module code, which is
    not counted either) adds nothing to what a self-report may hide, and neither does a count
    the program ran to its exit by never saying "done" (red team helper-85). Without the cgroup
    (every exit counted, and the module too) the allowance is `TEARDOWN_S_PER_MB` a MiB."""
    from perfgym.enamel.timer import GAP_SLACK_S, TEARDOWN_S_PER_MB, call_time
    from perfgym.sandbox.execution import Status
    from perfgym.sandbox.pyworker import CallResult
    from perfgym.sandbox.worker_messages import CPU_BY_CGROUP

    lying = CallResult(status=Status.OK, wall_s=0.5, reported_call_s=1e-6, program_cpu_s=0.301,
                       peak_rss_mb=1000.0)  # fmt: skip
    with_exit = call_time(lying, [], reference_gap_s=0.001)
    call_only = call_time(lying.model_copy(update={"program_cpu_call_only": True}), [], 0.001)
    to_exit = call_time(lying.model_copy(update={"cpu_mechanism": CPU_BY_CGROUP}), [], 0.001)
    assert with_exit == pytest.approx(0.301 - 0.001 - GAP_SLACK_S - TEARDOWN_S_PER_MB * 1000)
    assert call_only == pytest.approx(0.301 - 0.001 - GAP_SLACK_S)
    assert to_exit == pytest.approx(0.301 - 0.001 - GAP_SLACK_S)


def test_sample_source_takes_enamel_s_code_from_a_completion(task):
    body = "    return []\n"
    assert sample_source(task, Candidate(task, completion=body)) == (body, "")
    fenced = "Here:\n```python\ndef f():\n    pass\n```\n"
    assert sample_source(task, Candidate(task, completion=fenced))[0] == "def f():\n    pass\n"
    assert sample_source(task, Candidate(task, completion="  "))[0] is None


def test_models_samples_and_missing_problems(task, workers):
    other = load_suite("enamel").get("HumanEval/55")
    good = task.reference.source
    wrong = f"def {task.entry_point}(*args):\n    return None\n"
    cands = [
        Candidate(task, source=good, model="m", sample=0),
        Candidate(task, source=wrong, model="m", sample=1),
        Candidate(task, completion="", model="m", sample=2),  # no code: a wrong sample
    ]
    seen: list[int] = []
    runs, excluded = evaluate_candidates([task, other], cands, workers, repeats=2,
                                         on_traces=lambda trs: seen.append(len(trs)))  # fmt: skip
    assert excluded == []
    run = runs["m"]
    # HumanEval/55 has no sample: counted as 0 over as many samples as the model's most.
    assert run.missing == ["HumanEval/55"] and len(run.problems) == 2
    assert [len(p.samples) for p in run.problems] == [3, 3]
    assert seen == [3, 1]  # each problem's traces handed over as soon as it is done
    stops = [t.stopped for t in run.traces]
    assert stops[1].startswith("wrong on") and stops[2].startswith("no code")
    assert stops[3].startswith("missing")
    eff1 = enamel_eff_at_k(run.problems, EnamelConfig(k=1))
    eff3 = enamel_eff_at_k(run.problems, EnamelConfig(k=3))
    assert eff1.per_task["HumanEval/55"] == 0.0 == eff3.per_task["HumanEval/55"]
    # eff@3 is the best of the three on HumanEval/1: the reference's own score; eff@1 a third.
    best = eff3.per_task[task.id]
    assert best > 0.3 and eff1.per_task[task.id] == pytest.approx(best / 3)
