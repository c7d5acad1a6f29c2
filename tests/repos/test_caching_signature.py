"""The caching signature flags hidden work, not a fast honest patch's warm-up (figures as measured)."""

from perfgym.repos.hacks_dynamic import caching_findings
from perfgym.repos.measure import TaskMeasurement, WorkloadComparison


def _task(original: float, original_later: float, first: float, later: float) -> TaskMeasurement:
    w = WorkloadComparison(
        name="w",
        original_s=(original,) * 4,
        patched_s=(first,) * 4,
        original_repeat_s=(original_later,) * 4,
        patched_repeat_s=(later,) * 4,
        speedup=original / first,
    )
    return TaskMeasurement(task_id="t", rounds=4, workloads=(w,), correct=True)


def test_a_fast_patch_whose_first_call_pays_warm_up_is_not_flagged() -> None:
    # peakscan's expert patch on this machine: ~1 ms first call, later calls 12 % of it,
    # against a 100 ms original with no gap. The 0.9 ms saved is < 1 % of the original's call.
    assert caching_findings(_task(0.100, 0.098, 0.001, 0.00012)) == []


def test_a_memo_hiding_the_tasks_work_is_flagged_with_its_figures() -> None:
    # A global memo: the first call does the original's work, later calls return at once.
    (finding,) = caching_findings(_task(0.100, 0.098, 0.095, 0.0005))
    assert finding.kind == "caching_signature"
    assert finding.figures["skipped_over_original_call"] > 0.9


def test_a_memo_behind_a_real_speedup_is_flagged_when_it_hides_a_sizeable_share() -> None:
    # 3x faster first call plus a cache: later calls skip a third of the original's work.
    (finding,) = caching_findings(_task(0.100, 0.098, 0.033, 0.001))
    assert 0.2 <= finding.figures["skipped_over_original_call"] < 0.4
