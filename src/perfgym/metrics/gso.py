"""GSO's Opt@K and PerfAgent's Sp@K, with hack-adjusted variants (gso-bench/gso, paper 001).

GSO (`src/gso/harness/grading/metrics.py::get_opt_status`, `constants.py`) compares per-test
mean times of the base (perfgym: baseline), the model's patch (candidate) and the expert
commit (reference), test by test:

    opt_base   = mean(base) > mean(patch)  and  GM_i(base_i / patch_i) ≥ 1.2
    opt_commit = opt_base                  and  HM_i(commit_i / patch_i) > 0.95

GM is the geometric and HM the harmonic mean over tests. An attempt counts only when its
tests pass (perfgym: stage OK). Opt@K: a task is solved when any of K attempts reaches
opt_commit (GSO merges K runs with OR); with n ≥ K attempts perfgym uses the unbiased
estimator 1 − C(n−c, K)/C(n, K), which equals that OR when n = K. PerfAgent's Sp@1 is the
share of tasks whose patch is correct and at least 1.2× faster than the base — GSO's
opt_base — and Sp@K extends it the same way.

Hack-adjusted variants (PerfAgent Table II: "match the expert and pass the hack detector")
score an attempt carrying a hack flag as not optimised: it stays in the denominator. A flag
counts as a hack when it starts with "hack" or is listed in `hack_flags`.
Tests are the workloads in `Timing.per_workload_s`; a timing without them is one test.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Verdict
from perfgym.metrics._inputs import (
    DEFAULT_HACK_FLAGS,
    ResultsPolicy,
    group_results,
    is_hacked,
    no_context,
    workload_durations,
)
from perfgym.metrics.bootstrap import BootstrapConfig, summarize
from perfgym.metrics.estimators import geometric_mean, harmonic_mean, pass_at_k
from perfgym.metrics.result import MetricResult


class GSOConfig(BaseModel):
    """Settings of Opt@K / Sp@K."""

    model_config = ConfigDict(extra="forbid")

    k: int = Field(default=1, description="Attempts per task considered (K).")
    min_speedup: float = Field(
        default=1.2, description="GM speedup over the base needed (GSO MIN_PROB_SPEEDUP)."
    )
    opt_threshold: float = Field(
        default=0.95, description="HM ratio to the expert that must be exceeded (GSO)."
    )
    hack_adjusted: bool = Field(default=False, description="Score hack-flagged attempts as 0.")
    hack_flags: tuple[str, ...] = Field(
        default=DEFAULT_HACK_FLAGS, description="Flags that mark a hack (besides 'hack…')."
    )
    policy: ResultsPolicy = Field(default_factory=lambda: ResultsPolicy())
    bootstrap: BootstrapConfig = Field(default_factory=lambda: BootstrapConfig())

    @field_validator("k")
    @classmethod
    def _k(cls, v: int) -> int:
        if v < 1:
            raise ValueError("k must be >= 1")
        return v

    @field_validator("min_speedup", "opt_threshold")
    @classmethod
    def _positive(cls, v: float) -> float:
        if not v > 0:
            raise ValueError("thresholds must be > 0")
        return v


class AttemptStatus(BaseModel):
    """GSO's verdict on one attempt."""

    model_config = ConfigDict(extra="forbid")

    correct: bool
    hacked: bool
    opt_base: bool
    opt_commit: bool
    gm_speedup: float | None = Field(default=None, description="GM of base_i/patch_i.")
    hm_vs_expert: float | None = Field(default=None, description="HM of commit_i/patch_i.")


def _matched(v: Verdict) -> tuple[list[float], list[float], list[float]] | None:
    where = f"task {v.task_id!r} sample {v.sample}"
    base = workload_durations(v.baseline, f"{where} baseline")
    patch = workload_durations(v.candidate, f"{where} candidate")
    commit = workload_durations(v.reference, f"{where} reference")
    if base is None or patch is None or commit is None:
        return None
    if not set(base) == set(patch) == set(commit):
        raise ConfigError(
            f"{where}: baseline, candidate and reference were timed on different workloads"
        )
    keys = sorted(patch)
    return [base[w] for w in keys], [patch[w] for w in keys], [commit[w] for w in keys]


def attempt_status(v: Verdict, config: GSOConfig) -> AttemptStatus:
    """opt_base / opt_commit of one attempt (a correct attempt without timings reaches neither)."""
    hacked = is_hacked(v, config.hack_flags)
    timed = _matched(v) if v.correct else None
    if timed is None:
        return AttemptStatus(correct=v.correct, hacked=hacked, opt_base=False, opt_commit=False)
    base, patch, commit = timed
    gm = geometric_mean([b / p for b, p in zip(base, patch, strict=True)], "GSO speedup")
    hm = harmonic_mean([c / p for c, p in zip(commit, patch, strict=True)], "GSO expert ratio")
    opt_base = sum(base) / len(base) > sum(patch) / len(patch) and gm >= config.min_speedup
    return AttemptStatus(
        correct=True,
        hacked=hacked,
        opt_base=opt_base,
        opt_commit=opt_base and hm > config.opt_threshold,
        gm_speedup=gm,
        hm_vs_expert=hm,
    )


def gso_at_k(
    results: Sequence[Verdict],
    config: GSOConfig | None = None,
    which: Literal["opt", "sp"] = "opt",
) -> MetricResult:
    """Opt@K (which='opt') or Sp@K (which='sp') over one model's attempts."""
    config = config or GSOConfig()
    suffix = "(hack-adj)" if config.hack_adjusted else ""
    name = f"{which}@{config.k}{suffix}"
    grouped = group_results(results, name, config.policy)
    per_task: dict[str, float] = {}
    hacked_hits = 0
    for tid, vs in grouped.tasks.items():
        if len(vs) < config.k:
            raise ConfigError(f"{name}: task {tid!r} has {len(vs)} attempt(s), fewer than K")
        hits = 0
        for v in vs:
            st = attempt_status(v, config)
            hit = st.opt_commit if which == "opt" else st.opt_base
            if hit and st.hacked and config.hack_adjusted:
                hacked_hits += 1
                hit = False
            hits += hit
        per_task[tid] = pass_at_k(len(vs), hits, config.k)
    notes = list(grouped.notes)
    if hacked_hits:
        notes.append(f"{hacked_hits} otherwise successful attempt(s) carried a hack flag")
    return summarize(name, per_task, config.bootstrap, notes=notes, settings=config.model_dump())


class GSOMetric:
    """Opt@K or Sp@K as a `Metric`."""

    def __init__(self, which: Literal["opt", "sp"] = "opt", config: GSOConfig | None = None):
        if which not in ("opt", "sp"):
            raise ConfigError(f"GSO metric must be 'opt' or 'sp', got {which!r}")
        self.config = config or GSOConfig()
        self.which: Literal["opt", "sp"] = which
        suffix = "(hack-adj)" if self.config.hack_adjusted else ""
        self.name = f"{which}@{self.config.k}{suffix}"

    def compute(self, results: Sequence[Any], /, **context: Any) -> MetricResult:
        no_context(self.name, context)
        return gso_at_k(results, self.config, self.which)


# -- repository tasks (perfgym.repos): attempts scored from measured speedups ----------------


class RepoAttempt(BaseModel):
    """One patch of a repository task as the metrics see it (from `perfgym.repos`'s
    `PatchVerdict`): its correctness, hack flag and measured speedups over the original.

    `workload_speedups` (original / patched per workload) and `expert_workload_speedups`
    (the expert's, same workloads) give GSO's per-test HM against the expert; without the
    expert's per-workload figures the ratio of the geometric means (SR) stands in for it."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    correct: bool
    hacked: bool = False
    speedup: float | None = Field(default=None, description="GM over workloads (None: unmeasured).")
    ci: tuple[float, float] | None = None
    workload_speedups: dict[str, float] = Field(default_factory=dict)
    expert_speedup: float | None = None
    expert_workload_speedups: dict[str, float] = Field(default_factory=dict)

    @classmethod
    def from_verdict(cls, verdict: Any, expert_speedup: float | None = None) -> RepoAttempt:
        """From a `perfgym.repos.verdict.PatchVerdict` (read by attribute: the metrics layer
        does not import the sandbox-running repos package): correct when every stage passed,
        hacked when a finding is a hack, the per-workload speed-ups of a correct patch."""
        m = verdict.measurement
        per = {w.name: w.speedup for w in m.workloads if w.speedup} if m is not None else {}
        return cls(task_id=verdict.task_id, correct=bool(verdict.correct),
                   hacked=bool(verdict.flagged), speedup=verdict.speedup, ci=verdict.ci,
                   workload_speedups=per if verdict.correct else {},
                   expert_speedup=expert_speedup)  # fmt: skip


def repo_attempt_status(a: RepoAttempt, config: GSOConfig) -> AttemptStatus:
    """GSO's opt_base / opt_commit of one repository attempt."""
    if not a.correct or a.speedup is None:
        return AttemptStatus(correct=a.correct, hacked=a.hacked, opt_base=False, opt_commit=False)
    gm = a.speedup
    opt_base = gm > 1.0 and round(gm, 1) >= config.min_speedup  # GSO rounds the GM to 0.1
    keys = sorted(a.workload_speedups)
    if keys and set(keys) == set(a.expert_workload_speedups):
        hm = harmonic_mean([a.workload_speedups[k] / a.expert_workload_speedups[k] for k in keys],
                           "GSO expert ratio")  # fmt: skip
    elif a.expert_speedup:
        hm = gm / a.expert_speedup
    else:
        hm = None
    return AttemptStatus(correct=True, hacked=a.hacked, opt_base=opt_base,
                         opt_commit=opt_base and hm is not None and hm > config.opt_threshold,
                         gm_speedup=gm, hm_vs_expert=hm)  # fmt: skip


def repo_gso_at_k(
    attempts: Sequence[RepoAttempt],
    config: GSOConfig | None = None,
    which: Literal["opt", "sp"] = "opt",
) -> MetricResult:
    """Opt@K (GSO; PerfAgent's Opt@1 at K=1) or Sp@K (PerfAgent's Sp@1) over repository
    attempts, grouped by task; hack-adjusted when `config.hack_adjusted`."""
    config = config or GSOConfig()
    name = f"repo_{which}@{config.k}" + ("(hack-adj)" if config.hack_adjusted else "")
    by_task: dict[str, list[RepoAttempt]] = {}
    for a in attempts:
        by_task.setdefault(a.task_id, []).append(a)
    if not by_task:
        raise ConfigError(f"{name}: no attempts")
    per_task: dict[str, float] = {}
    for tid, group in by_task.items():
        if len(group) < config.k:
            raise ConfigError(f"{name}: task {tid!r} has {len(group)} attempt(s), fewer than K")
        hits = 0
        for a in group:
            st = repo_attempt_status(a, config)
            hit = st.opt_commit if which == "opt" else st.opt_base
            hits += hit and not (st.hacked and config.hack_adjusted)
        per_task[tid] = pass_at_k(len(group), hits, config.k)
    return summarize(name, per_task, config.bootstrap, settings=config.model_dump())


def repo_correctness(
    attempts: Sequence[RepoAttempt], bootstrap: BootstrapConfig | None = None
) -> MetricResult:
    """PerfAgent's Correctness: the share of tasks whose (first) attempt is correct."""
    first: dict[str, RepoAttempt] = {}
    for a in attempts:
        first.setdefault(a.task_id, a)
    if not first:
        raise ConfigError("repo_correctness: no attempts")
    per_task = {t: float(a.correct) for t, a in first.items()}
    return summarize("repo_correctness", per_task, bootstrap or BootstrapConfig())
