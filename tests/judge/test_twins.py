"""Twins: one program (the same bytes) judged once, and a role's program not timed again
(perfgym.judge.twins)."""

from __future__ import annotations

import pytest

from perfgym.judge import Judge, JudgeConfig
from perfgym.judge.twins import ROLE_TIMING, SAME_PROGRAM, representatives, twin_key
from perfgym.tasks.suite import load_suite

# Reads its own file: a comment could change what it does, so it is nobody's twin.
SELF_READER = "import sys\n_me = open(__file__).read()\n"


@pytest.fixture(scope="module")
def task():
    return load_suite("perfgym-core").get("py-topk-words")


@pytest.fixture(scope="module")
def verdicts(task):
    pool = (task.pool or task.references)[0].source
    sources = [
        pool + "\n# one\n",
        pool + "\n# one\n",  # the same bytes: a twin
        task.baseline.source,  # the baseline handed back, byte for byte
        SELF_READER + pool,
        SELF_READER + pool + "\n# marked\n",
        pool.replace("\n", "\n\n") + "print(end='')\n",  # another program: judged alone
        pool + "\n\n# two: a comment of its own makes another file\n",
    ]
    config = JudgeConfig(repeats=1, noise_rounds=0, clock="cpu")
    with Judge(config) as judge:
        return judge.judge_many([judge_candidate(task, s, k) for k, s in enumerate(sources)])


def judge_candidate(task, source, sample):
    from perfgym.judge.candidate import Candidate

    return Candidate(task, None, source, "m", sample, "perfgym-core")


def test_a_twin_shares_its_representatives_judgement_with_its_own_sample(verdicts) -> None:
    first, twin = verdicts[0], verdicts[1]
    assert first.correct and twin.correct
    assert SAME_PROGRAM not in first.flags and SAME_PROGRAM in twin.flags
    assert twin.sample == 1 and twin.source == first.source
    assert twin.candidate.samples_s == first.candidate.samples_s  # one measurement, not two
    assert [t.id for t in twin.tests] == [t.id for t in first.tests]


def test_the_baseline_handed_back_is_tested_but_has_the_baselines_timing(task, verdicts) -> None:
    v = verdicts[2]
    assert v.correct and "baseline" in v.same_source
    assert ROLE_TIMING in v.candidate.flags
    assert v.candidate.samples_s == v.baseline.samples_s
    assert {t.id for t in task.tests} <= {t.id for t in v.tests}  # its own tests ran


def test_a_program_that_reads_its_own_text_is_judged_alone(verdicts) -> None:
    a, b = verdicts[3], verdicts[4]
    assert a.correct and b.correct
    assert SAME_PROGRAM not in a.flags + b.flags
    assert a.candidate.samples_s != b.candidate.samples_s  # two measurements


def test_another_program_is_not_a_twin(verdicts) -> None:
    v = verdicts[5]
    assert v.correct and SAME_PROGRAM not in v.flags and ROLE_TIMING not in v.candidate.flags


def test_a_copy_with_another_comment_is_judged_on_its_own(verdicts) -> None:
    """Identity by construction: a comment apart is another file (its size, its text), so
    another program to the twin rule, measured itself."""
    first, other = verdicts[0], verdicts[6]
    assert other.correct and SAME_PROGRAM not in other.flags
    assert other.candidate.samples_s != first.candidate.samples_s


def test_a_cheaper_twin_cannot_score_above_its_program(verdicts) -> None:
    """The twin's speedup is its representative's exactly: a comment buys nothing."""
    first, twin = verdicts[0], verdicts[1]
    assert twin.candidate.estimate_s == first.candidate.estimate_s
    assert twin.baseline.estimate_s == first.baseline.estimate_s


def test_the_rule_reads_text_not_order_and_can_be_turned_off(task) -> None:
    from perfgym.judge.record import Entry
    from perfgym.judge.variant import Variant

    def entry(src: str | None) -> Entry:
        return Entry(judge_candidate(task, src, 0), Variant(label="x", source=src))

    judged, twin_of = representatives(task, [entry("print(1)\n"), entry(None), entry(None),
                                             entry("print(1)  # same\n"), entry("print(2)\n"),
                                             entry("print(1)\n")])  # fmt: skip
    assert judged == [0, 1, 2, 3, 4] and twin_of == {5: 0}
    assert twin_key(task, "import inspect\n") and twin_key(task, "print(1)\n")
    assert twin_key(task, "print(1)  # same\n") != twin_key(task, "print(1)\n")
    assert JudgeConfig(same_program_once=False).same_program_once is False


def test_a_copy_stopped_at_extraction_never_speaks_for_a_good_one(task) -> None:
    """A copy whose source cannot be run (a lone surrogate in a trailing comment: NX) is its
    own verdict, and the good program after it is judged, not handed the NX."""
    pool = (task.pool or task.references)[0].source
    from perfgym.judge.candidate import Candidate

    with Judge(JudgeConfig(repeats=1, noise_rounds=0, clock="cpu")) as judge:
        bad, good = judge.judge_many([Candidate(task, None, pool + "# \ud800\n", "m", 0),
                                      Candidate(task, None, pool + "# fine\n", "m", 1)])  # fmt: skip
    assert bad.stage.value == "NX" and good.correct, good.reason
    assert SAME_PROGRAM not in good.flags
