"""The report's charts as base64 PNG strings (matplotlib on bare Figures: no pyplot state)."""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from perfgym.metrics import FailureStages, PerfCodeBenchTable
from perfgym.report.sections import Staircase
from perfgym.simulate.plot import figure_png, simulation_figure
from perfgym.simulate.result import Simulation

STAGE_COLORS = {"NX": "#7f7f7f", "NC": "#9467bd", "NR": "#d62728", "WO": "#ff7f0e", "OK": "#2ca02c"}


def _b64(fig: Figure) -> str:
    return base64.b64encode(figure_png(fig)).decode("ascii")


def _width(n_groups: float) -> float:
    return max(6.0, min(13.0, 1.2 + 0.9 * n_groups))


def leaderboard_chart(board: Mapping[str, PerfCodeBenchTable]) -> str:
    """CRR, FBR, RBR and mean CGRE per run, with bootstrap 95 % CI whiskers."""
    cols = [("CRR", "crr"), ("FBR", "fbr"), ("RBR", "rbr"), ("CGRE", "cgre")]
    runs = list(board)
    fig = Figure(figsize=(_width(len(cols) * len(runs) / 2), 3.6), dpi=100, layout="constrained")
    ax = fig.subplots()
    width = 0.8 / max(1, len(runs))
    for i, run in enumerate(runs):
        vals, lo, hi = [], [], []
        for _, attr in cols:
            m = getattr(board[run], attr)
            v = 100 * (m.value or 0.0)
            vals.append(v)
            lo.append(v - 100 * (m.ci_low if m.ci_low is not None else v / 100))
            hi.append(100 * (m.ci_high if m.ci_high is not None else v / 100) - v)
        x = np.arange(len(cols)) + (i - (len(runs) - 1) / 2) * width
        ax.bar(x, vals, width, yerr=[lo, hi], capsize=3, label=run, color=f"C{i % 10}")
    ax.set_xticks(np.arange(len(cols)), [c for c, _ in cols])
    ax.set_ylabel("% of tasks (whiskers: 95 % CI)")
    ax.set_ylim(0, 105)
    ax.legend(fontsize=8, ncols=min(4, len(runs)))
    ax.grid(axis="y", alpha=0.3)
    return _b64(fig)


def staircase_chart(stair: Staircase) -> str:
    """Mean RLPF reward per rung per run, each bar labelled with its count of results."""
    runs = list(stair.counts)
    fig = Figure(figsize=(_width(len(stair.rungs)), 3.8), dpi=100, layout="constrained")
    ax = fig.subplots()
    width = 0.8 / max(1, len(runs))
    for i, run in enumerate(runs):
        x = np.arange(len(stair.rungs)) + (i - (len(runs) - 1) / 2) * width
        means = [stair.mean_reward[run][r] for r in stair.rungs]
        heights = [m if m is not None else 0.0 for m in means]
        bars = ax.bar(x, heights, width, label=run, color=f"C{i % 10}")
        for bar, rung, m in zip(bars, stair.rungs, means, strict=True):
            n = stair.counts[run][rung]
            if n:
                ax.annotate(f"n={n}", (bar.get_x() + bar.get_width() / 2, max(m or 0, 0)),
                            ha="center", va="bottom", fontsize=7, rotation=90)  # fmt: skip
    ax.axhline(0, color="0.3", linewidth=0.8)
    ax.set_xticks(np.arange(len(stair.rungs)), stair.rungs)
    ax.set_ylabel("mean RLPF reward")
    ax.set_title("RLPF staircase: NX < NC < NR < WO < correct < faster < reference")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return _b64(fig)


def speedup_chart(values: Mapping[str, Sequence[float]]) -> str:
    """Histogram of Tb/Tc over correct results (log scale; left of 1 = slower than baseline)."""
    fig = Figure(figsize=(8, 3.6), dpi=100, layout="constrained")
    ax = fig.subplots()
    every = [s for vs in values.values() for s in vs]
    if every:
        lo, hi = min(every + [0.5]), max(every + [2.0])
        edges = [float(e) for e in np.geomspace(lo / 1.05, hi * 1.05, 30)]
        for i, (run, vs) in enumerate(values.items()):
            if vs:
                ax.hist(vs, bins=edges, histtype="stepfilled", alpha=0.45, color=f"C{i % 10}",
                        edgecolor=f"C{i % 10}", label=f"{run} (n={len(vs)})")  # fmt: skip
        ax.set_xscale("log")
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no correct timed result", ha="center", va="center")
    ax.axvline(1.0, color="0.2", linestyle="--", linewidth=1)
    ax.set_xlabel("speedup over the baseline Tb/Tc (log scale)")
    ax.set_ylabel("results")
    ax.grid(alpha=0.3)
    return _b64(fig)


def stages_chart(stages: Mapping[str, FailureStages]) -> str:
    """Horizontal stacked bars: the share of results ending at each stage, per run."""
    runs = list(stages)
    fig = Figure(figsize=(8, 1.2 + 0.45 * len(runs)), dpi=100, layout="constrained")
    ax = fig.subplots()
    left = np.zeros(len(runs))
    for stage, color in STAGE_COLORS.items():
        share = np.array(
            [100 * stages[r].by_stage.get(stage, 0) / max(1, stages[r].n) for r in runs]
        )
        ax.barh(runs, share, left=left, color=color, label=stage)
        left += share
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of results by furthest stage reached")
    ax.invert_yaxis()
    ax.legend(ncols=5, fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    return _b64(fig)


def simulation_chart(sims: Sequence[Simulation], title: str) -> str:
    return _b64(simulation_figure(sims, title))
