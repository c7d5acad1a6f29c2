"""Bad input: every metric refuses it with a ConfigError naming the problem, never a numpy crash."""

from __future__ import annotations

import pytest

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Stage
from perfgym.metrics import (
    ResultsPolicy,
    beyond_breakdown,
    correctness_pass_at_k,
    failure_stages,
    gso_at_k,
    mercury_beyond,
    p_tau_pass_at_k,
    perfcodebench_table,
    speedup_distribution,
    speedup_ratio_score,
)
from perfgym.metrics.perfcodebench import PerfCodeBenchConfig
from perfgym.metrics.ptau import PTauConfig
from perfgym.tasks.task import StoredMeasurement


def pool(*seconds: float) -> list[StoredMeasurement]:
    """Passing pool solutions with the given median durations."""
    return [StoredMeasurement(median_s=s) for s in seconds]


POOLS = {"a": pool(1.0, 2.0), "b": pool(1.0, 2.0)}

# Every verdict-consuming metric, called the way a user would.
METRICS = {
    "perfcodebench": lambda rs: perfcodebench_table(rs),
    "pass@k": lambda rs: correctness_pass_at_k(rs),
    "p-tau": lambda rs: p_tau_pass_at_k(rs, POOLS),
    "beyond": lambda rs: beyond_breakdown(rs, POOLS),
    "mercury": lambda rs: mercury_beyond(rs, POOLS),
    "opt@k": lambda rs: gso_at_k(rs),
    "swefficiency": lambda rs: speedup_ratio_score(rs),
    "speedups": lambda rs: speedup_distribution(rs),
    "stages": lambda rs: failure_stages(rs),
}


@pytest.mark.parametrize("metric", sorted(METRICS))
def test_empty_results(metric: str) -> None:
    with pytest.raises(ConfigError, match="empty"):
        METRICS[metric]([])


@pytest.mark.parametrize("metric", sorted(METRICS))
def test_results_mixing_suites(mk, metric: str) -> None:  # type: ignore[no-untyped-def]
    rs = [
        mk("a", Stage.OK, 1.0, 2.0, 0.5, suite="s1"),
        mk("b", Stage.OK, 1.0, 2.0, 0.5, suite="s2"),
    ]
    with pytest.raises(ConfigError, match="mix suites"):
        METRICS[metric](rs)


@pytest.mark.parametrize("metric", sorted(METRICS))
def test_results_mixing_models(mk, metric: str) -> None:  # type: ignore[no-untyped-def]
    rs = [mk("a", Stage.OK, 1.0, 2.0, 0.5, model="x"), mk("b", Stage.OK, 1.0, 2.0, 0.5, model="y")]
    with pytest.raises(ConfigError, match="mix models"):
        METRICS[metric](rs)


@pytest.mark.parametrize("metric", sorted(METRICS))
def test_duplicate_samples(mk, metric: str) -> None:  # type: ignore[no-untyped-def]
    rs = [mk("a", Stage.OK, 1.0, 2.0, 0.5), mk("a", Stage.OK, 1.0, 2.0, 0.5)]
    with pytest.raises(ConfigError, match="appears twice"):
        METRICS[metric](rs)


@pytest.mark.parametrize("metric", sorted(set(METRICS) - {"stages", "pass@k"}))
@pytest.mark.parametrize("bad", [float("nan"), -1.0, float("inf"), 0.0])
def test_bad_candidate_durations(mk, metric: str, bad: float) -> None:  # type: ignore[no-untyped-def]
    rs = [mk("a", Stage.OK, bad, 2.0, 0.5)]
    with pytest.raises(ConfigError, match="duration"):
        METRICS[metric](rs)


@pytest.mark.parametrize("metric", ["perfcodebench", "opt@k", "swefficiency"])
def test_bad_baseline_duration(mk, metric: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match="baseline"):
        METRICS[metric]([mk("a", Stage.OK, 1.0, float("nan"), 0.5)])


@pytest.mark.parametrize("metric", ["p-tau", "beyond", "mercury"])
def test_pool_of_one_solution(mk, metric: str) -> None:  # type: ignore[no-untyped-def]
    one = {"a": pool(1.0)}
    call = {
        "p-tau": lambda: p_tau_pass_at_k([mk("a", Stage.OK, 1.0)], one),
        "beyond": lambda: beyond_breakdown([mk("a", Stage.OK, 1.0)], one),
        "mercury": lambda: mercury_beyond([mk("a", Stage.OK, 1.0)], one),
    }[metric]
    with pytest.raises(ConfigError, match="at least 2"):
        call()


def test_infrastructure_failures_are_refused_or_excluded(mk) -> None:  # type: ignore[no-untyped-def]
    rs = [mk("a", Stage.OK, 1.0, 2.0, 0.5), mk("b", Stage.NR, infra_error=True)]
    with pytest.raises(ConfigError, match="infrastructure"):
        perfcodebench_table(rs)
    cfg = PerfCodeBenchConfig(policy=ResultsPolicy(infra_errors="exclude"))
    t = perfcodebench_table(rs, cfg)
    assert t.n_tasks == 1 and t.crr.value == 1.0
    assert any("infrastructure" in n for n in t.crr.notes)
    with pytest.raises(ConfigError, match="every result"):
        perfcodebench_table([mk("b", Stage.NR, infra_error=True)], cfg)


def test_non_verdicts_are_refused() -> None:
    with pytest.raises(ConfigError, match="Verdict"):
        perfcodebench_table([{"task_id": "a"}])  # type: ignore[list-item]


def test_unknown_config_fields_are_refused() -> None:
    with pytest.raises(ValueError):
        PerfCodeBenchConfig(cgre_treshold=0.8)  # type: ignore[call-arg]


def test_pools_from_tasks_and_failed_harness_runs(mk) -> None:  # type: ignore[no-untyped-def]
    from perfgym.metrics import pools_from_tasks
    from perfgym.tasks.task import Language, Solution, StoredMeasurement, Task, TaskKind, TestCase

    def sol(label: str, seconds: float | None, **kw: object) -> Solution:
        stored = None if seconds is None else StoredMeasurement(median_s=seconds, **kw)  # type: ignore[arg-type]
        return Solution(label=label, source="print(1)", stored=stored)

    task = Task(
        id="a",
        family="f",
        language=Language.PYTHON,
        kind=TaskKind.STDIO,
        baseline=sol("baseline", 9.0),
        references=[sol("reference", 1.0)],
        pool=[
            sol("pool-1", 2.0),
            sol("pool-2", 3.0),
            sol("pool-3", None),
            sol("pool-4", 0.1, all_ok=False),
        ],
        tests=[TestCase(id="t1", stdin="", expected="1")],
    )
    pools = pools_from_tasks([task])
    assert [m.median_s for m in pools["a"]] == [2.0, 3.0, 0.1]
    with_refs = pools_from_tasks([task], include_references=True)
    assert [m.median_s for m in with_refs["a"]] == [2.0, 3.0, 0.1, 1.0]
    # The 0.1 s solution failed a harness run: it is no reference, so p10 is the 2 s one.
    r = p_tau_pass_at_k([mk("a", Stage.OK, 1.5)], pools, PTauConfig(tau=10))
    assert r.value == 1.0
