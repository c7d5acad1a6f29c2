"""Metrics of repository attempts: Opt@K / Sp@K (GSO, PerfAgent), SR (SWE-fficiency),
correctness and the hack-adjusted Opt@1, on measured evaluations and on the rules' edges."""

from __future__ import annotations

import pytest

from perfgym.errors import ConfigError
from perfgym.metrics.gso import GSOConfig, RepoAttempt, repo_correctness, repo_gso_at_k
from perfgym.metrics.swefficiency import repo_speedup_ratio_score


def _a(tid: str, speedup: float | None, *, correct: bool = True, hacked: bool = False,
       expert: float = 4.0) -> RepoAttempt:  # fmt: skip
    return RepoAttempt(task_id=tid, correct=correct, hacked=hacked, speedup=speedup,
                       expert_speedup=expert)  # fmt: skip


def test_measured_expert_patches_reach_opt_and_sp(expert_runs) -> None:  # type: ignore[no-untyped-def]
    attempts = [RepoAttempt.from_verdict(ev, expert_speedup=ev.speedup)
                for ev in expert_runs.values()]  # fmt: skip
    assert all(a.correct and a.speedup and a.speedup > 1.2 for a in attempts)
    assert repo_gso_at_k(attempts).value == 1.0
    assert repo_gso_at_k(attempts, which="sp").value == 1.0
    assert repo_correctness(attempts).value == 1.0
    assert repo_speedup_ratio_score(attempts).value == pytest.approx(1.0)


def test_opt_needs_both_thresholds() -> None:
    attempts = [
        _a("fast", 4.0),  # matches the expert
        _a("close", 3.9),  # 0.975 of the expert: still opt
        _a("short", 3.0),  # 0.75 of the expert: sp only
        _a("tiny", 1.14, expert=1.1),  # beats the expert but GSO's GM (rounded) < 1.2
    ]
    opt = repo_gso_at_k(attempts)
    assert opt.per_task == {"fast": 1.0, "close": 1.0, "short": 0.0, "tiny": 0.0}
    sp = repo_gso_at_k(attempts, which="sp")
    assert sp.per_task == {"fast": 1.0, "close": 1.0, "short": 1.0, "tiny": 0.0}


def test_per_workload_hm_against_the_expert() -> None:
    a = RepoAttempt(task_id="t", correct=True, speedup=4.0,
                    workload_speedups={"v": 8.0, "h": 2.0},
                    expert_workload_speedups={"v": 4.0, "h": 4.0}, expert_speedup=4.0)  # fmt: skip
    # GM equals the expert's, but the HM over workloads (2 and 0.5) is 0.8 < 0.95
    assert repo_gso_at_k([a]).value == 0.0


def test_cheaper_or_hacked_patches_score_nothing() -> None:
    """A fast but incorrect patch, and (adjusted) a flagged one, score like no patch at all."""
    attempts = [_a("wrong", 50.0, correct=False), _a("hack", 50.0, hacked=True), _a("ok", 4.0)]
    assert repo_gso_at_k(attempts).per_task == {"wrong": 0.0, "hack": 1.0, "ok": 1.0}
    adj = repo_gso_at_k(attempts, GSOConfig(hack_adjusted=True))
    assert adj.name == "repo_opt@1(hack-adj)" and adj.per_task["hack"] == 0.0
    sr = repo_speedup_ratio_score(attempts, hack_adjusted=True)
    assert sr.per_task == {"wrong": 0.25, "hack": 0.25, "ok": 1.0}
    assert sr.value == pytest.approx(3 / (4 + 4 + 1))  # harmonic mean
    assert repo_speedup_ratio_score(attempts).per_task["hack"] == 12.5
    assert repo_correctness(attempts).value == pytest.approx(2 / 3)


def test_opt_at_k_over_attempts_and_bad_input() -> None:
    attempts = [_a("t", 1.0), _a("t", 4.0), _a("t", 1.1)]
    assert repo_gso_at_k(attempts, GSOConfig(k=1)).value == pytest.approx(1 / 3)
    assert repo_gso_at_k(attempts, GSOConfig(k=3)).value == 1.0
    with pytest.raises(ConfigError, match="fewer than K"):
        repo_gso_at_k(attempts, GSOConfig(k=4))
    with pytest.raises(ConfigError, match="no attempts"):
        repo_gso_at_k([])
    with pytest.raises(ConfigError, match="no expert speedup"):
        repo_speedup_ratio_score([_a("x", 2.0, expert=0.0)])
    with pytest.raises(ConfigError, match="more than one attempt"):
        repo_speedup_ratio_score(attempts)
