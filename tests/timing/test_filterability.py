"""Duration filterability (DMC-Optim B.7): a ladder of workload costs vs a flat one."""

from perfgym.timing.filterability import duration_filterability


def test_a_ladder_of_workload_costs_is_filterable_a_flat_one_is_not():
    ladder = [{"w1": 0.1, "w2": 0.3, "w3": 0.9}, {"w1": 0.05, "w2": 0.16, "w3": 0.5}]
    flat = [{"w1": 0.30, "w2": 0.31, "w3": 0.29}, {"w1": 0.10, "w2": 0.11, "w3": 0.10}]
    lad = duration_filterability(ladder)
    fl = duration_filterability(flat)
    assert lad.filterable is True and lad.robust_cv >= 0.3 and lad.workloads == 3
    assert fl.filterable is False and fl.robust_cv < 0.3


def test_one_workload_cannot_be_judged():
    f = duration_filterability([{"w1": 1.0}, {"w1": 2.0}])
    assert f.filterable is None and "two timed workloads" in f.reason
