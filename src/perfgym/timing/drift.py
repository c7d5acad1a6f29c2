"""Drift detection: a fixed probe set measured at the start (which sets each probe's noise band)
and before and after every measurement; when the probes moved beyond the band between the two
checks, the timings taken meanwhile are flagged (they keep correctness only)."""

from __future__ import annotations

import os
import statistics
import sys
import threading
import time
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from perfgym.machine import fingerprint
from perfgym.sandbox.base import Sandbox
from perfgym.sandbox.execution import Status
from perfgym.sandbox.limits import Limits
from perfgym.timing.check_configs import DriftConfig
from perfgym.timing.summary import robust_cv

#: Fixed programs, each a different machine property: process start-up (the fixed overhead an
#: affine calibration's intercept absorbs), interpreter dispatch (CPU speed), and dependent
#: random reads over a 10 MiB list (memory latency). Each takes 10-60 ms on a 2020s core.
PROBES: dict[str, str] = {
    "startup": "pass\n",
    "interpreter": "s = 0\nfor i in range(200_000):\n    s += i * i % 7\nprint(s)\n",
    "memory": (
        "n = 1 << 18\nnxt = [(i * 69069 + 12345) & (n - 1) for i in range(n)]\n"
        "j = 0\nfor _ in range(n >> 2):\n    j = nxt[j]\nprint(j)\n"
    ),
}


class ProbeBand(BaseModel):
    """One probe's reference level and noise band, from the start runs."""

    model_config = ConfigDict(extra="forbid")

    name: str
    centre_s: float
    robust_cv: float | None
    half_width: float = Field(description="Relative: a check outside centre·(1 ± this) drifted.")
    samples_s: list[float]


class DriftCheck(BaseModel):
    """One periodic check of every probe."""

    model_config = ConfigDict(extra="forbid")

    at: float = Field(description="time.time() of the check.")
    medians_s: dict[str, float]
    moves: dict[str, float] = Field(description="Probe -> check median / start centre - 1.")
    drifted: bool = Field(description="The level moved beyond the band since the start.")
    reason: str = ""


class ProbeReport(BaseModel):
    """The machine, its probe bands and every check: written beside results."""

    model_config = ConfigDict(extra="forbid")

    fingerprint: str
    clock: str
    bands: list[ProbeBand]
    checks: list[DriftCheck] = Field(default_factory=list)


class DriftMonitor:
    """Measures the probes through a sandbox on one core, in the judge's clock."""

    def __init__(
        self,
        sandbox: Sandbox,
        config: DriftConfig | None = None,
        clock: str = "cpu",
        core: int | None = None,
        python: str | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.config = config or DriftConfig()
        self.clock = "cpu" if clock == "cpu" else "wall"
        self.core = core
        self.python = python or os.path.realpath(sys.executable)
        self.bands: dict[str, ProbeBand] = {}
        self.checks: list[DriftCheck] = []
        self._last_use = 0.0
        self._lock = threading.Lock()

    def _run(self, names: Sequence[str], rounds: int) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {n: [] for n in names}
        for r in range(rounds):
            order = list(names[r % len(names) :]) + list(names[: r % len(names)])
            for name in order:
                for _attempt in range(3):  # a sandbox fault is ours: retry it, never measure it
                    ex = self.sandbox.run(
                        [self.python, "-S", "probe.py"],
                        files={"probe.py": PROBES[name]},
                        limits=Limits(wall_s=30, memory_mb=512),
                        cpu=self.core,
                    )
                    if ex.status is not Status.SANDBOX_ERROR:
                        break
                m = ex.measurement
                if ex.status is not Status.OK or m is None:
                    raise RuntimeError(
                        f"drift probe {name!r} failed: {ex.status.value} {ex.reason}"
                    )
                out[name].append(m.cpu_s if self.clock == "cpu" else m.wall_s)
        return out

    def start(self) -> None:
        """Measure every probe `start_runs` times and set its band."""
        c = self.config
        for name, xs in self._run(c.probes, c.start_runs).items():
            centre = statistics.median(xs)
            rcv = robust_cv(xs)
            half = max(c.min_band, c.band_sigmas * (rcv or 0.0))
            self.bands[name] = ProbeBand(
                name=name, centre_s=centre, robust_cv=rcv, half_width=half, samples_s=xs
            )

    def check(self) -> DriftCheck:
        """Measure the probes now (or reuse the last check when nothing ran since)."""
        with self._lock:
            if not self.bands:
                self.start()
            last = self.checks[-1] if self.checks else None
            if (
                last is not None
                and last.at >= self._last_use
                and time.time() - last.at <= self.config.reuse_s
            ):
                return last
            meds = {
                n: statistics.median(xs)
                for n, xs in self._run(self.config.probes, self.config.check_runs).items()
            }
            moves = {n: meds[n] / self.bands[n].centre_s - 1 for n in meds}
            why = self._moved(moves)
            result = DriftCheck(at=time.time(), medians_s=meds, moves=moves, drifted=bool(why),
                                reason=why)  # fmt: skip
            self.checks.append(result)
            return result

    def _moved(self, moves: dict[str, float]) -> str:
        """Why these relative moves are drift, or ''. A machine-wide shift moves the probes
        together: their median move is judged against the widest band. One probe alone (a
        burst hitting its runs) must move 3x its own band."""
        typical = statistics.median(moves.values())
        band = max(b.half_width for b in self.bands.values())
        if abs(typical) > band:
            return f"probes moved {typical:+.0%} (median; band ±{band:.0%})"
        return "; ".join(
            f"probe {n} moved {mv:+.0%} (3x its band ±{self.bands[n].half_width:.0%})"
            for n, mv in moves.items()
            if abs(mv) > 3 * self.bands[n].half_width
        )

    def between(self, before: DriftCheck, after: DriftCheck) -> str:
        """Why the machine drifted between two checks (during the measurement they bracket),
        or ''. A machine that moved to another steady level is not drifting: timings taken
        there are consistent with each other (`DriftCheck.drifted` reports the level change
        against the start, which stored durations need a new calibration for)."""
        moves = {n: after.medians_s[n] / before.medians_s[n] - 1 for n in before.medians_s}
        return self._moved(moves)

    def used(self) -> None:
        """Mark that measurements ran (the next check must measure again)."""
        self._last_use = time.time()

    def report(self) -> ProbeReport:
        return ProbeReport(fingerprint=fingerprint(), clock=self.clock,
                           bands=list(self.bands.values()), checks=list(self.checks))  # fmt: skip
