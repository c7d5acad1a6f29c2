"""`perfgym.judge.measure` on real runs: interleaving, early stopping, lanes, A/A."""

import itertools
import sys
from pathlib import Path

import pytest

# The graded programs and the quiet-machine check are the timing tests' (tests/timing/helpers.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "timing"))

from helpers import graded_task, loop_program, require_quiet_machine  # noqa: E402
from perfgym.judge import Candidate, Judge, JudgeConfig  # noqa: E402
from perfgym.judge.measure import lanes_of, schedule  # noqa: E402
from perfgym.judge.variant import Variant  # noqa: E402
from perfgym.sandbox.pool import usable_cores  # noqa: E402
from perfgym.tasks.task import TestCase  # noqa: E402
from perfgym.timing.compare import DEFAULT_MARGIN, compare_timings  # noqa: E402

# Compares wall-clock times or loads cores on purpose: no other test runs beside it.
pytestmark = pytest.mark.alone


def test_schedule_runs_every_variant_once_per_round_in_changing_orders():
    vs = [Variant(label=x, source="") for x in "ABC"]
    ws = [TestCase(id="w1"), TestCase(id="w2")]
    inter = schedule(vs, ws, range(6), interleave=True)
    rounds = [[it[2].label for it in inter if it[0] == r and it[3].id == "w1"] for r in range(6)]
    assert all(sorted(order) == ["A", "B", "C"] for order in rounds)
    assert len({tuple(o) for o in rounds}) >= 3  # positions and neighbours change
    assert inter == schedule(vs, ws, range(6), interleave=True)  # reproducible
    assert [it[0] for it in inter[:3]] == [0, 0, 0]  # a round completes before the next
    block = schedule(vs, ws, range(3), interleave=False)
    assert [it[2].label for it in block[:6]] == ["A", "A", "A", "B", "B", "B"]


def test_lanes_follow_the_configured_cores():
    cores = usable_cores()
    assert lanes_of(JudgeConfig()) == cores
    assert lanes_of(JudgeConfig(cores=[cores[-1]])) == [cores[-1]]
    assert lanes_of(JudgeConfig(timing_mode=False, concurrency=3)) == [None] * 3


def test_max_repeats_must_not_undercut_repeats():
    with pytest.raises(ValueError):
        JudgeConfig(repeats=5, max_repeats=3)


@pytest.fixture(scope="module")
def task():
    return graded_task("graded-small", passes=[1, 3], sizes=[150_000])


def test_early_stopping_adds_rounds_until_the_ci_is_tight_and_stops_at_the_cap(task):
    loose = JudgeConfig(repeats=3, max_repeats=6, target_rel_ci=0.9, drift=None)
    tight = loose.model_copy(update={"target_rel_ci": 1e-9})
    with Judge(loose) as judge:
        (v,) = judge.judge_many([Candidate(task, source=loop_program(2), model="m")])
        assert len(v.candidate.samples_s) == 3  # already within 90 %: no extra round
        judge.config = tight
        (v,) = judge.judge_many([Candidate(task, source=loop_program(2), model="m")])
    assert len(v.candidate.samples_s) == 6  # never that tight: stopped at the cap
    assert len(v.baseline.samples_s) == 6  # every variant gets the same interleaved rounds
    assert v.candidate.clock == "cpu" and v.candidate.ci_s is not None


def test_aa_check_identical_programs_are_not_different_a_slower_one_is(task):
    """Four copies of one program measured as four candidates, with one doing 3x the work;
    decided as the judge's timings are (rounds paired, the practical-equivalence margin)."""
    require_quiet_machine()
    same = loop_program(2)
    cands = [Candidate(task, source=same, model=f"copy{i}") for i in range(4)]
    cands.append(Candidate(task, source=loop_program(6), model="slow"))
    with Judge(JudgeConfig(repeats=9, measure_baseline=False, measure_reference=False)) as judge:
        vs = {v.model: v.candidate for v in judge.judge_many(cands)}
    copies = [vs[f"copy{i}"] for i in range(4)]
    twins = [compare_timings(a, b, paired=True) for a, b in itertools.combinations(copies, 2)]
    assert all(c.margin == DEFAULT_MARGIN for c in twins)
    assert sum(c.significant for c in twins) <= 1, [(c.ratio, c.ci) for c in twins]
    for c in copies:
        slower = compare_timings(vs["slow"], c, paired=True)
        assert slower.faster == "b" and slower.ratio > 1.5, slower  # start-up dilutes 3x
