"""`judge_streaming`: any backend's `judge_many`, handing each task's verdicts out as they are ready."""

from __future__ import annotations

import inspect
from collections.abc import Sequence

from perfgym.judge.backend import JudgeBackend
from perfgym.judge.candidate import Candidate, Finished, Progress
from perfgym.judge.verdict import Verdict

#: Tasks per call for a backend without a `finished` hook (the service, Ray): an interrupt
#: loses at most the slice in flight, and a cluster still gets this many tasks at once.
SLICE_TASKS = 8


def streams_verdicts(backend: JudgeBackend) -> bool:
    """Whether the backend's `judge_many` takes a `finished` hook (the local `Judge` does)."""
    try:
        return "finished" in inspect.signature(backend.judge_many).parameters
    except (TypeError, ValueError):
        return False


def judge_streaming(
    backend: JudgeBackend,
    candidates: Sequence[Candidate],
    progress: Progress | None = None,
    finished: Finished | None = None,
    *,
    slice_tasks: int = SLICE_TASKS,
) -> list[Verdict]:
    """`backend.judge_many(candidates)`, calling `finished(indices, verdicts)` as verdicts are
    ready: per task where the backend has the hook, else per slice of `slice_tasks` whole tasks."""
    if finished is None:
        return backend.judge_many(candidates, progress)
    if streams_verdicts(backend):
        return backend.judge_many(candidates, progress, finished=finished)  # type: ignore[call-arg]
    by_task: dict[str, list[int]] = {}
    for i, c in enumerate(candidates):
        by_task.setdefault(c.task.id, []).append(i)
    groups = list(by_task.values())
    out: list[Verdict | None] = [None] * len(candidates)
    done = 0
    for start in range(0, len(groups), slice_tasks):
        indices = [i for g in groups[start : start + slice_tasks] for i in g]

        def sliced(d: int, _total: int, before: int = done) -> None:
            if progress is not None:
                progress(before + d, len(candidates))

        verdicts = backend.judge_many([candidates[i] for i in indices], sliced)
        for i, v in zip(indices, verdicts, strict=True):
            out[i] = v
        finished(indices, verdicts)
        done += len(indices)
    return [v for v in out if v is not None]
