"""The report's training section: per training log, reward with its EMA and the EMA-peak step,
the fraction of zero-variance GRPO groups, reward (or stage share) by stage, and the speedup
noise, as embedded PNGs. It draws what `perfgym.train.diagnostics` computed (passed in by the
CLI: the report layer sits below the trainer adapters)."""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Sequence
from typing import Any, Protocol

from matplotlib.figure import Figure

from perfgym.simulate.plot import figure_png

STAGE_COLORS = {"NX": "#7f7f7f", "NC": "#9467bd", "NR": "#d62728", "WO": "#ff7f0e", "OK": "#2ca02c"}


class TrainingLog(Protocol):
    """What the section reads (`perfgym.train.diagnostics.Diagnostics` has it)."""

    source: str
    kind: str
    steps: Sequence[Any]
    alpha: float
    ema: Sequence[float]
    peak_step: int | None
    checkpoint: int | None
    notes: Sequence[str]


def _series(steps: Sequence[Any], name: str) -> tuple[list[int], list[float]]:
    xs, ys = [], []
    for s in steps:
        v = getattr(s, name)
        if v is not None and not (isinstance(v, float) and math.isnan(v)):
            xs.append(s.step)
            ys.append(float(v))
    return xs, ys


def training_figure(log: TrainingLog) -> Figure:
    fig = Figure(figsize=(13, 6.4), dpi=100, layout="constrained")
    (a, b), (c, d) = fig.subplots(2, 2)
    xs, ys = _series(log.steps, "reward")
    a.plot(xs, ys, color="C0", alpha=0.35, label="reward (step mean)")
    if log.ema:
        a.plot(xs, list(log.ema), color="C0", label=f"EMA α={log.alpha:g}")
    if log.peak_step is not None:
        a.axvline(
            log.peak_step, color="C1", linestyle="--", label=f"EMA peak (step {log.peak_step})"
        )
    a.set_title("reward")
    a.legend(fontsize=8)
    zx, zy = _series(log.steps, "zero_variance_frac")
    b.bar(zx, zy, color="C1")
    b.set_ylim(0, 1)
    b.set_title("zero-variance GRPO groups (fraction per step)")
    per_stage = any(s.reward_by_stage for s in log.steps)
    for stage, color in STAGE_COLORS.items():
        field = "reward_by_stage" if per_stage else "stage_frac"
        pts = [(s.step, getattr(s, field)[stage]) for s in log.steps if stage in getattr(s, field)]
        if pts:
            c.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", color=color, label=stage)
    c.set_title("mean reward by stage" if per_stage else "share of completions by stage")
    c.legend(fontsize=8, ncols=5)
    nx_, ny = _series(log.steps, "speedup_rel_noise")
    d.plot(nx_, ny, marker=".", color="C2")
    d.set_title("speedup noise (median relative CI half-width)")
    if not ny:
        d.text(0.5, 0.5, "no timing CIs in this log", ha="center", va="center",
               transform=d.transAxes)  # fmt: skip
    for ax in (a, b, c, d):
        ax.set_xlabel("step")
    return fig


def training_html(logs: Sequence[TrainingLog]) -> str:
    """The section's HTML ('' without logs)."""
    if not logs:
        return ""
    parts = ['<h2 id="training">Training diagnostics</h2>']
    for log in logs:
        png = base64.b64encode(figure_png(training_figure(log))).decode("ascii")
        zero = [s.zero_variance_frac for s in log.steps if s.zero_variance_frac is not None]
        mean_zero = f"{100 * sum(zero) / len(zero):.1f} %" if zero else "–"
        chosen = "–" if log.checkpoint is None else f"checkpoint-{log.checkpoint}"
        parts.append(
            f"<h3>{html.escape(log.source)} ({html.escape(log.kind)})</h3>"
            f"<p>{len(log.steps)} steps; EMA peak (α = {log.alpha:g}) at step "
            f"{log.peak_step if log.peak_step is not None else '–'}; selected checkpoint: "
            f"{html.escape(chosen)}; mean zero-variance group fraction: {mean_zero}.</p>"
            f'<img class="chart" alt="training diagnostics" src="data:image/png;base64,{png}">'
        )  # fmt: skip
        parts += [f'<p class="meta">{html.escape(n)}</p>' for n in log.notes]
    return "\n".join(parts)
