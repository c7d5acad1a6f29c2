"""`ReusedTimings`: a task's baseline timing kept across calls of one `Judge` while the drift
probes show the machine unchanged and the reference, measured afresh beside the candidates,
agrees with its kept timing, so a GRPO batch (the same task judged call after call) does not
pay for its slow baseline on every call."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass

from perfgym.judge.config import JudgeConfig
from perfgym.judge.plan import TaskPlan
from perfgym.judge.variant import Variant
from perfgym.judge.verdict import Timing
from perfgym.timing.drift import DriftCheck, DriftMonitor

#: Carried by a reused timing: its rounds were measured in an earlier call, so they are not
#: paired by round with the candidate's (compare them unpaired).
REUSED_FLAG = "reused_timing"


@dataclass(frozen=True)
class _Kept:
    timings: dict[str, Timing]
    check: DriftCheck  # the drift check that closed their measurement
    at: float


class ReusedTimings:
    """Each task's own solutions' timings, from the last measurement that held them all; the
    baseline's is reused while (a) `config.reuse_references` is on, (b) a drift check now, and
    the one closing the candidates' measurement, are both within the probes' band of the check
    that closed the kept measurement, (c) the reference measured with the candidates agrees with
    its kept timing (`agrees`), and (d) they are younger than `config.reuse_max_age_s`. Any of
    these failing drops them: that call measures every variant again, interleaved."""

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        self._by_key: dict[str, _Kept] = {}
        self._lock = threading.Lock()

    def usable(
        self, plan: TaskPlan, own: Mapping[str, Variant], monitor: DriftMonitor | None
    ) -> dict[str, Timing] | None:
        """Copies of the kept timings of `own` (flagged REUSED_FLAG), or None: measure them."""
        if not self._on(plan, monitor) or monitor is None or not own:
            return None
        key = _key(plan, own)
        with self._lock:
            kept = self._by_key.get(key)
        if kept is None:
            return None
        if time.time() - kept.at > self.config.reuse_max_age_s or monitor.between(
            kept.check, monitor.check()
        ):
            self.drop(key)
            return None
        out = {}
        for label, t in kept.timings.items():
            copy = t.model_copy(deep=True)
            copy.flags.append(REUSED_FLAG)
            out[label] = copy
        return out

    def confirm(self, plan: TaskPlan, own: Mapping[str, Variant], monitor: DriftMonitor) -> bool:
        """After the candidates were measured alone: is the machine still where the kept timings
        were measured? (False drops them.)"""
        key = _key(plan, own)
        with self._lock:
            kept = self._by_key.get(key)
        if kept is None or monitor.between(kept.check, monitor.check()):
            self.drop(key)
            return False
        return True

    def agrees(
        self,
        plan: TaskPlan,
        own: Mapping[str, Variant],
        fresh: Mapping[str, Timing],
        kept: Mapping[str, Timing],
    ) -> bool:
        """Does the reference measured now agree with its kept timing within
        `config.reuse_tolerance`? It is the canary of the kept baseline: a program of the same
        task, measured in the same way, is a finer probe of what moved than the drift probes
        (False drops the kept timings)."""
        now, then = fresh.get("reference"), kept.get("reference")
        ok = (now is not None and then is not None and now.ok and then.ok
              and now.estimate_s is not None and then.estimate_s is not None
              and then.estimate_s > 0)  # fmt: skip
        if ok:
            assert now is not None and then is not None
            assert now.estimate_s is not None and then.estimate_s is not None
            ratio = now.estimate_s / then.estimate_s
            tol = 1 + self.config.reuse_tolerance
            ok = 1 / tol <= ratio <= tol
        if not ok:
            self.drop(_key(plan, own))
        return ok

    def keep(
        self,
        plan: TaskPlan,
        own: Mapping[str, Variant],
        timings: Mapping[str, Timing],
        monitor: DriftMonitor | None,
    ) -> None:
        """Keep the fresh timings of `own` (only when every one is usable)."""
        if not self._on(plan, monitor) or monitor is None or not own:
            return
        key = _key(plan, own)
        mine = {label: timings.get(label) for label in own}
        if not all(t is not None and t.ok for t in mine.values()):
            self.drop(key)
            return
        kept = _Kept(timings={k: t.model_copy(deep=True) for k, t in mine.items() if t},
                     check=monitor.check(), at=time.time())  # fmt: skip
        with self._lock:
            self._by_key[key] = kept

    def pooled(
        self, plan: TaskPlan, own: Mapping[str, Variant], measured: Timing, pooled: Timing
    ) -> None:
        """The baseline's kept timing, where it is `measured` (this batch's run), becomes
        `pooled` (`noise_bands.pool_twins`): a later batch that reuses it is compared with the
        baseline the batch that measured it used."""
        key = _key(plan, own)
        with self._lock:
            kept = self._by_key.get(key)
            now = kept.timings.get("baseline") if kept is not None else None
            if kept is None or now is None or now.samples_s != measured.samples_s:
                return
            timings = {**kept.timings, "baseline": pooled.model_copy(deep=True)}
            self._by_key[key] = _Kept(timings=timings, check=kept.check, at=kept.at)

    def drop(self, key: str) -> None:
        with self._lock:
            self._by_key.pop(key, None)

    def _on(self, plan: TaskPlan, monitor: DriftMonitor | None) -> bool:
        # Instruction counts are not bracketed by drift probes (they do not drift), and a
        # judge without probes cannot tell the machine is unchanged.
        return self.config.reuse_references and monitor is not None and plan.clock != "instructions"


def _key(plan: TaskPlan, own: Mapping[str, Variant]) -> str:
    """What the kept timings were measured on: the task, its workloads, the clock and the
    solutions' sources (a task reloaded with other solutions is another key)."""
    h = hashlib.sha256()
    for part in [plan.key, plan.clock]:
        h.update(part.encode() + b"\0")
    for w in plan.workloads or plan.tests:
        h.update(f"{w.id}\0{w.stdin}\0{w.args!r}\0".encode("utf-8", "surrogatepass"))
    for label in sorted(own):
        h.update(label.encode() + b"\0" + (own[label].source or "").encode() + b"\0")
    return h.hexdigest()
