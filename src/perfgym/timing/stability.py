"""Rerun stability of a measurement protocol: percentile swings, ranking correlation between
reruns, and whether "is A faster than B?" decisions hold (the figures of bench/timing_stability).

A run is `{task id: {solution label: Timing}}`. A solution's mean percentile (DMC-Optim's
ranking signal) is, averaged over workloads, the share of the task's other solutions slower
than it on that workload (ties count half), in points: 100 beats every other solution.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Callable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from perfgym.timing.compare import compare_timings
from perfgym.timing.result import Timing

Run = Mapping[str, Mapping[str, Timing]]
Key = tuple[str, str]


def mean_percentile(c: Mapping[str, float], pool: Sequence[Mapping[str, float]]) -> float | None:
    """Mean over workloads of the share of `pool` slower than `c` (ties half), in points."""
    scores = []
    for w, t in c.items():
        others = [p[w] for p in pool if w in p]
        if others:
            beaten = sum(1.0 if o > t else 0.5 if o == t else 0.0 for o in others)
            scores.append(100.0 * beaten / len(others))
    return statistics.fmean(scores) if scores else None


def _usable(t: Timing | None) -> bool:
    # Not `usable_s`: any estimate of an ok timing counts here, zero and negative ones too.
    return t is not None and t.ok and t.estimate_s is not None


def percentiles(
    run: Run, labels: Callable[[str, str], bool] = lambda _t, _l: True
) -> dict[Key, float]:
    """(task, label) -> mean percentile among the task's other usable solutions."""
    out: dict[Key, float] = {}
    for task, sols in run.items():
        ok = {lab: t for lab, t in sols.items() if labels(task, lab) and _usable(t)}
        for lab, t in ok.items():
            pool = [o.per_workload_s for other, o in ok.items() if other != lab]
            p = mean_percentile(t.per_workload_s, pool)
            if p is not None:
                out[task, lab] = p
    return out


def swings(tables: Sequence[Mapping[Key, float]]) -> dict[Key, float]:
    """Peak-to-peak change of each solution's percentile across reruns (keys in every rerun)."""
    keys = set.intersection(*(set(t) for t in tables)) if tables else set()
    return {k: max(t[k] for t in tables) - min(t[k] for t in tables) for k in keys}


def rerun_spearman(tables: Sequence[Mapping[Key, float]]) -> list[float]:
    """Spearman correlation of the percentile rankings for every pair of reruns."""
    from scipy.stats import spearmanr  # scipy loads where a correlation is computed

    out = []
    for a, b in itertools.combinations(tables, 2):
        keys = sorted(set(a) & set(b))
        if len(keys) < 3:
            continue
        rho = spearmanr([a[k] for k in keys], [b[k] for k in keys]).statistic
        out.append(float(rho) if math.isfinite(rho) else 0.0)
    return out


class PairRecord(BaseModel):
    """One pair of solutions of a task across reruns."""

    model_config = ConfigDict(extra="forbid")

    task: str
    a: str
    b: str
    ratio: float = Field(description="Median over reruns of estimate(a) / estimate(b).")
    decisions: list[str] = Field(description="Per rerun: 'a', 'b' (faster) or 'neither'.")

    @property
    def flipped(self) -> bool:
        return "a" in self.decisions and "b" in self.decisions

    @property
    def decided_share(self) -> float:
        return sum(d != "neither" for d in self.decisions) / len(self.decisions)


def pair_records(
    runs: Sequence[Run],
    *,
    significant: bool = True,
    labels: Callable[[str, str], bool] = lambda _t, _l: True,
    paired: bool = True,
    margin: float | None = None,
) -> list[PairRecord]:
    """Every pair of usable solutions of every task, decided in each rerun: by
    `compare_timings` on the per-round totals (significant=True; `paired` and `margin` as
    there: a run measures a task's solutions together, so rounds pair) or by which estimate is
    smaller (strict)."""
    out = []
    for task in sorted(set.intersection(*(set(r) for r in runs)) if runs else set()):
        names = sorted(set.intersection(*(set(r[task]) for r in runs)))
        names = [n for n in names if labels(task, n)]
        for a, b in itertools.combinations(names, 2):
            pairs = [(r[task][a], r[task][b]) for r in runs]
            if not all(_usable(x) and _usable(y) for x, y in pairs):
                continue
            decisions, ratios = [], []
            for x, y in pairs:
                assert x.estimate_s is not None and y.estimate_s is not None
                ratios.append(x.estimate_s / y.estimate_s)
                if significant:
                    c = compare_timings(x, y, paired=paired, margin=margin)
                    assert c is not None  # both usable, same clock
                    decisions.append(c.faster)
                else:
                    fa, fb = x.estimate_s < y.estimate_s, y.estimate_s < x.estimate_s
                    decisions.append("a" if fa else "b" if fb else "neither")
            out.append(PairRecord(task=task, a=a, b=b, ratio=statistics.median(ratios),
                                  decisions=decisions))  # fmt: skip
    return out


class DecisionSummary(BaseModel):
    """Figure (f): flips, and how often clearly different pairs are decided."""

    model_config = ConfigDict(extra="forbid")

    pairs: int
    flips: int = Field(description="Pairs decided 'a' in one rerun and 'b' in another.")
    clear_pairs: int = Field(description="Pairs whose ratio is >= `clear` either way.")
    clear_decided: float | None = Field(description="Share of their reruns decided.")
    close_pairs: int = Field(description="Pairs 1.1x-1.5x apart (where naive timing fails).")
    close_decided: float | None
    close_flips: int
    clear: float = 1.2


def summarise_decisions(records: Sequence[PairRecord], clear: float = 1.2) -> DecisionSummary:
    def spread(r: PairRecord) -> float:
        return max(r.ratio, 1 / r.ratio)

    clear_r = [r for r in records if spread(r) >= clear]
    close_r = [r for r in records if 1.1 <= spread(r) <= 1.5]

    def share(rs: list[PairRecord]) -> float | None:
        return statistics.fmean(r.decided_share for r in rs) if rs else None

    return DecisionSummary(pairs=len(records), flips=sum(r.flipped for r in records),
                           clear_pairs=len(clear_r), clear_decided=share(clear_r),
                           close_pairs=len(close_r), close_decided=share(close_r),
                           close_flips=sum(r.flipped for r in close_r), clear=clear)  # fmt: skip
