"""Plots of simulations: activation curves against y = x, and the mean signal per rung."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

from matplotlib.figure import Figure

from perfgym.errors import ConfigError
from perfgym.simulate.result import Simulation

#: More curves than this on one axis stop being readable; a sweep plots its best ones.
MAX_CURVES = 8


def simulation_figure(simulations: Sequence[Simulation], title: str = "") -> Figure:
    """Two panels: activation curves (binned and smoothed), and the staircase per rung label.

    Built on a bare `Figure` (Agg canvas), never pyplot, so no global backend state changes.
    """
    if not simulations:
        raise ConfigError("no simulation to plot")
    shown = list(simulations)[:MAX_CURVES]
    fig = Figure(figsize=(12, 4.8), dpi=100, layout="constrained")
    curves, stairs = fig.subplots(1, 2, width_ratios=[1, 1.25])
    curves.plot([0, 1], [0, 1], color="0.6", linestyle=":", linewidth=1, label="y = x")
    signal = shown[0].config.get("signal", "reward")
    for i, sim in enumerate(shown):
        color = f"C{i % 10}"
        d = sim.diagnostics
        rho = "n/a" if d.spearman is None else f"{d.spearman:.3f}"
        curves.plot(sim.curve.x, sim.curve.y, marker="o", markersize=4, color=color,
                    label=f"{sim.title}  ρ={rho}  AUC={d.auc:.2f}")  # fmt: skip
        curves.plot(sim.curve.x, sim.curve.smoothed, color=color, linestyle="--", linewidth=1)
        steps = [s for s in sim.staircase if s.mean_signal is not None]
        stairs.plot([s.label for s in steps], [s.mean_signal for s in steps], marker="s",
                    color=color, label=sim.title)  # fmt: skip
    curves.set_xlim(0, 1)
    curves.set_ylim(-0.03, 1.03)
    curves.set_xlabel("solution quality (normalised per task)")
    curves.set_ylabel("pass rate" if signal == "pass" else "reward (normalised by its bounds)")
    curves.set_title("activation curves (dashed: smoothed trend)")
    curves.legend(fontsize=7, loc="upper left")
    curves.grid(alpha=0.3)
    stairs.set_ylim(-0.03, 1.03)
    stairs.set_xlabel("rung (synthetic failures, then the task's solutions)")
    stairs.set_ylabel("mean signal")
    stairs.set_title("staircase: mean signal per rung")
    stairs.tick_params(axis="x", labelrotation=30, labelsize=8)
    stairs.grid(alpha=0.3)
    if len(simulations) > len(shown):
        stairs.text(0.01, 0.98, f"best {len(shown)} of {len(simulations)} shown",
                    transform=stairs.transAxes, va="top", fontsize=8)  # fmt: skip
    if title:
        fig.suptitle(title)
    return fig


def figure_png(fig: Figure) -> bytes:
    """The figure as PNG bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def plot_simulations(simulations: Sequence[Simulation], out: Path, title: str = "") -> Path:
    """Write the simulations' figure as a PNG file."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(figure_png(simulation_figure(simulations, title)))
    return out
