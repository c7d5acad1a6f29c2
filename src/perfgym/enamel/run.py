"""What the CLI calls to run ENAMEL's protocol: the sandbox's warm Python workers opened here.

The CLI names what to evaluate and where results go; it never builds a worker pool itself
(an import-linter contract keeps `perfgym.cli` off `perfgym.sandbox.pyworker`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from perfgym.enamel.candidates import ModelRun, evaluate_candidates
from perfgym.enamel.checkpoint import EnamelCheckpoint
from perfgym.enamel.pairing import EnamelTiming
from perfgym.enamel.protocol import EnamelTrace, evaluate
from perfgym.judge.candidate import Candidate
from perfgym.sandbox.pyworker import PythonWorkerPool
from perfgym.tasks.task import Task

#: (solution set, problems done, problems in all) as the run goes.
LabelProgress = Callable[[str, int, int], None]


def evaluate_solution_sets(
    tasks: Sequence[Task],
    labels: Sequence[str],
    repeats: int,
    checkpoint: EnamelCheckpoint,
    *,
    progress: LabelProgress | None = None,
    done: Callable[[str], None] | None = None,
    timing: EnamelTiming = EnamelTiming.SEQUENTIAL,
) -> None:
    """Each shipped solution set `labels` over the problems `checkpoint` has not kept yet, every
    problem's trace written to it as it finishes; `done(label)` once a set is complete."""
    with PythonWorkerPool() as workers:
        for label in labels:
            before = checkpoint.reused_of(label)

            def tick(n: int, total: int, label: str = label, before: int = before) -> None:
                if progress is not None:
                    progress(label, before + n, before + total)

            def keep(tr: EnamelTrace, label: str = label) -> None:
                checkpoint.finished(label, tr)

            evaluate(checkpoint.todo(label, list(tasks)), label, workers, repeats,
                     progress=tick, finished=keep, timing=timing)  # fmt: skip
            if done is not None:
                done(label)


def evaluate_model_samples(
    tasks: Sequence[Task],
    candidates: Sequence[Candidate],
    repeats: int,
    *,
    progress: Callable[[int, int], None] | None = None,
    on_traces: Callable[[list[EnamelTrace]], None] | None = None,
    timing: EnamelTiming = EnamelTiming.SEQUENTIAL,
) -> tuple[dict[str, ModelRun], list[str]]:
    """Model samples through ENAMEL's protocol (`candidates.evaluate_candidates`)."""
    with PythonWorkerPool() as workers:
        return evaluate_candidates(tasks, candidates, workers, repeats, progress=progress,
                                   on_traces=on_traces, timing=timing)  # fmt: skip
