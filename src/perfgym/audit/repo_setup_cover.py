"""How much work a repository task's import + setup noise can hide: per workload the verdict is
decided on, the growth the clock leaves uncharged (`perfgym.repos.measure.uncharged_room`)
against the expert patch's own first call. Where the room is half the call or more, a patch can
move that share of its call into import or setup and be credited for it (red team helper-119:
2-3 ms moved into bloomc's import, 15-25 ms of noise, against a 4 ms call: 24.6x credited where
the same work in the call earned 15.1x)."""

from __future__ import annotations

import statistics

from pydantic import BaseModel, ConfigDict

from perfgym.repos.measure import TaskMeasurement, uncharged_room

#: Uncharged room at this share of the expert's call or more is weak cover.
MAX_SETUP_COVER = 0.5


class SetupCover(BaseModel):
    """One workload: the uncharged import + setup room and the expert's median first call."""

    model_config = ConfigDict(frozen=True)

    workload: str
    room_s: float
    call_s: float

    @property
    def share(self) -> float:
        return self.room_s / max(self.call_s, 1e-9)


def setup_cover(m: TaskMeasurement) -> list[SetupCover]:
    """Per workload the verdict is decided on (the hidden ones where there are any), from the
    expert's measurement: the original's import + setup rounds and the patched first calls."""
    decided = [w for w in m.workloads if w.hidden] or list(m.workloads)
    return [SetupCover(workload=w.name, room_s=uncharged_room(w.original_setup_s),
                       call_s=statistics.median(w.patched_call_s))
            for w in decided if w.original_setup_s and w.patched_call_s]  # fmt: skip


def weak_cover(covers: list[SetupCover]) -> list[SetupCover]:
    return [c for c in covers if c.share >= MAX_SETUP_COVER]
