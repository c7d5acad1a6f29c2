"""Gameability probes, each on a task built to fail it (the probe must report "scores") and one
built to pass it ("does not score"), through the real judge and sandbox."""

from __future__ import annotations

import pytest
from audit_tasks import audit, sum_task

from perfgym.audit.results import Outcome, Severity
from perfgym.tasks.task import Solution

TRIVIAL = ["no-output", "first-line", "constant", "exit-early"]


def test_a_fixed_input_task_accepts_a_lookup_table_and_a_hidden_input_one_does_not():
    """The issue's pair: fixed inputs are memorisable; hidden inputs with an exact checker are not."""
    fixed = audit(sum_task(hidden=False), ["lookup-table"]).result("lookup-table")
    assert fixed is not None and fixed.outcome is Outcome.SCORES, fixed
    assert fixed.severity is Severity.HIGH and fixed.decided_on == "visible"
    assert fixed.rewards["rlvr"] == 1.0  # a memorised answer earns the correctness reward
    hidden = audit(sum_task(hidden=True), ["lookup-table"]).result("lookup-table")
    assert hidden is not None and hidden.outcome is Outcome.DOES_NOT_SCORE, hidden
    assert hidden.decided_on == "hidden" and hidden.stage == "WO"
    assert hidden.rewards["rlvr"] == 0.0


def test_a_permissive_checker_accepts_every_trivial_answer_and_an_exact_one_none():
    loose = audit(sum_task(hidden=False, permissive=True), [*TRIVIAL, "lookup-table"])
    for name in [*TRIVIAL, "lookup-table"]:
        r = loose.result(name)
        assert r is not None and r.outcome is Outcome.SCORES, (name, r)
    exact = audit(sum_task(hidden=True), TRIVIAL)
    for name in TRIVIAL:
        r = exact.result(name)
        assert r is not None and r.outcome is Outcome.DOES_NOT_SCORE, (name, r)
        assert r.severity is Severity.NONE


def test_a_crash_after_partial_output_never_scores_even_under_a_permissive_checker():
    """A crashed run is NR whatever the checker says: the attack this probe models cannot pass
    perfgym's judge, so its built-to-fail task still reports 'does not score' (and why)."""
    for task in (sum_task(hidden=False, permissive=True), sum_task(hidden=True)):
        r = audit(task, ["crash-after-partial"]).result("crash-after-partial")
        assert r is not None and r.outcome is Outcome.DOES_NOT_SCORE and r.stage == "NR", r


def test_exit_early_scores_on_a_task_whose_one_answer_is_always_right():
    """A task whose every case has the same answer (a constant output) is memorised by a
    program that prints it and reads nothing, even with an exact checker."""
    const = "import sys\nsys.stdin.read()\nprint('ok')\n"
    slow = "import sys\nd = sys.stdin.read().split()\nfor _ in range(len(d)): pass\nprint('ok')\n"
    task = sum_task(hidden=True, baseline=Solution(label="baseline", source=slow),
                    references=[Solution(label="reference", source=const)],
                    tests=[t.model_copy(update={"expected": "ok\n"}) for t in sum_task(
                        hidden=True).tests])  # fmt: skip
    r = audit(task, ["exit-early"]).result("exit-early")
    assert r is not None and r.outcome is Outcome.SCORES, r


@pytest.mark.parametrize("probe", ["baseline-identical", "baseline-comment"])
def test_the_baseline_again_earns_no_speed_credit(probe):
    r = audit(sum_task(hidden=True, size=5000), [probe]).result(probe)
    assert r is not None and r.outcome is Outcome.DOES_NOT_SCORE, r
    assert r.stage == "OK" and r.faster is False and "same source" in r.detail


def test_a_baseline_that_reads_its_own_bytes_gets_no_credit_for_a_comment():
    """Built to fail: the baseline burns CPU unless its own file holds the probe's comment, so
    the commented copy is truly faster; the judge ties programs whose sources differ only in
    comments, so it still earns nothing (no task can make this probe score on this judge)."""
    burn = ("import sys\nsrc = open(__file__).read() if '__file__' in globals() else ''\n"
            "if 'changes nothing' not in src:\n    sum(range(3_000_000))\n"
            "d = sys.stdin.read().split()\nprint(sum(map(int, d[1:])))\n")  # fmt: skip
    task = sum_task(hidden=True, size=2000, baseline=Solution(label="baseline", source=burn))
    r = audit(task, ["baseline-comment"]).result("baseline-comment")
    assert r is not None and r.outcome is Outcome.DOES_NOT_SCORE and "same source" in r.detail


def test_a_program_that_idles_when_timed_scores_only_where_timed_outputs_go_unchecked():
    """Built to fail: a judge that does not check the measured runs' outputs rewards a program
    that does its work in the tests and none when its cores say it is timed. Built to pass:
    the default judge checks every measured round's output and catches it."""
    task = sum_task(hidden=True, size=40000)
    lax = audit(task, ["timing-aware"], check_workload_outputs=False).result("timing-aware")
    assert lax is not None and lax.outcome is Outcome.SCORES, lax
    assert lax.faster is True and lax.severity is Severity.HIGH
    strict = audit(task, ["timing-aware"]).result("timing-aware")
    assert strict is not None and strict.outcome is Outcome.DOES_NOT_SCORE, strict
    assert strict.stage == "WO"


def test_probes_that_cannot_be_written_are_reported_not_applicable():
    """A C task has no timing-detection program (Python only): reported 'not applicable' with
    why, never skipped; the probes that have a C writer run."""
    c_sum = ("#include <stdio.h>\nint main(void){long n,x,t=0;scanf(\"%ld\",&n);"
             "for(long i=0;i<n;i++){scanf(\"%ld\",&x);t+=x;}printf(\"%ld\\n\",t);return 0;}\n")  # fmt: skip
    from perfgym.tasks.task import Language

    task = sum_task(hidden=True, size=200, language=Language.C,
                    baseline=Solution(label="baseline", source=c_sum),
                    references=[Solution(label="reference", source=c_sum)])  # fmt: skip
    a = audit(task, ["timing-aware", "lookup-table", "no-output"])
    ta = a.result("timing-aware")
    assert ta is not None and ta.outcome is Outcome.NOT_APPLICABLE and "Python" in ta.detail
    lt, no = a.result("lookup-table"), a.result("no-output")
    assert lt is not None and lt.outcome is Outcome.DOES_NOT_SCORE, lt  # C lookup table: written
    assert no is not None and no.outcome is Outcome.DOES_NOT_SCORE, no


@pytest.mark.alone
def test_memorised_inputs_with_the_baseline_behind_them_earn_speed_only_where_timed_inputs_are_seen():
    """Attack: answer the inputs one saw from a table and run the baseline on the rest; always
    correct, and fast exactly on the timed inputs when those are the visible ones."""
    fixed = audit(sum_task(hidden=False, size=60000), ["lookup-fallback"]).result("lookup-fallback")
    assert fixed is not None and fixed.outcome is Outcome.SCORES, fixed
    assert fixed.stage == "OK" and fixed.faster is True
    # On hidden inputs the attack runs the baseline itself: "faster" there is the rank test's
    # false positive on two equal programs (seen once in a full run), so a second audit must
    # agree before it counts; an attack that works scores in both.
    for _ in range(2):
        again = audit(sum_task(hidden=True, size=60000), ["lookup-fallback"])
        hidden = again.result("lookup-fallback")
        if hidden is not None and hidden.outcome is Outcome.DOES_NOT_SCORE:
            break
    assert hidden is not None and hidden.outcome is Outcome.DOES_NOT_SCORE, hidden
    assert hidden.stage == "OK" and hidden.faster is False


def test_a_harness_task_gets_not_applicable_for_programs_its_harness_cannot_take():
    """PerfCodeBench's layout: the harness runs its own fixed workloads and builds the
    solution itself, so no lookup table or trivial program is written; the baseline again
    still is, and earns nothing."""
    from pathlib import Path

    from perfgym.tasks.suite import load_suite

    root = Path(__file__).parents[1] / "fixtures" / "perfcodebench" / "executable_tasks"
    task = next(t for t in load_suite(str(root)).tasks if t.id == "py_range_sums")
    a = audit(task, ["lookup-table", "no-output", "timing-aware", "baseline-identical"])
    for name in ("lookup-table", "no-output", "timing-aware"):
        r = a.result(name)
        assert r is not None and r.outcome is Outcome.NOT_APPLICABLE and r.detail, (name, r)
    same = a.result("baseline-identical")
    assert same is not None and same.outcome is Outcome.DOES_NOT_SCORE, same


@pytest.mark.parametrize(
    "language", ["c", "cpp", "go", "java", "javascript", "rust"], ids=lambda x: x
)
def test_every_compiled_language_gets_a_lookup_table_and_fixed_inputs_accept_it(language):
    """The lookup table written in the task's own language builds, runs, and memorises a
    fixed-input task (scores); its trivial answers are still rejected by an exact checker."""
    from sum_programs import PROGRAMS

    from perfgym.tasks.task import Language

    lang = Language(language)
    correct = PROGRAMS[Language.C if lang is Language.CPP else lang][0]  # C's is C++ too
    task = sum_task(hidden=False, size=50, language=lang,
                    baseline=Solution(label="baseline", source=correct),
                    references=[Solution(label="reference", source=correct)])  # fmt: skip
    a = audit(task, ["lookup-table", "constant"], repeats=1)
    lt = a.result("lookup-table")
    assert lt is not None and lt.outcome is Outcome.SCORES, lt
    const = a.result("constant")
    assert const is not None and const.outcome is Outcome.DOES_NOT_SCORE, const


def test_a_task_without_a_generator_gets_a_result_from_every_probe():
    """Bad input: no generator (and so no hidden inputs). No probe is skipped silently: each
    has a result; those that cannot run here are 'not applicable' with why, and every judged
    probe says its decision was made on the visible inputs (so the memorised table scores)."""
    from perfgym.audit.registry import list_probes

    task = sum_task(hidden=False, size=300)
    assert task.generator is None
    names = list_probes()
    a = audit(task, names, repeats=3)
    assert [r.probe for r in a.results] == names
    for r in a.results:
        if r.outcome is Outcome.NOT_APPLICABLE:
            assert r.detail, r
        elif r.kind.value == "gameability":
            assert r.decided_on == "visible", r
    lookup = a.result("lookup-table")
    assert lookup is not None and lookup.outcome is Outcome.SCORES, lookup
