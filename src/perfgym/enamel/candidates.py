"""ENAMEL's protocol on model samples: one reference run per problem, every sample against it.

As ENAMEL's `evaluate`: per problem the reference is measured once, then every sample of every
model runs the levels; eff@k and pass@k are averaged over all scored problems. A scored problem
a model gave no sample for scores 0 for that model (ENAMEL needs a sample for every problem; a
missing one is counted, never dropped from the denominator). A sample is the code ENAMEL would
run: a `source` as given, or the code extracted from a `completion` (a fenced block, a whole
file) and, failing that, the completion itself as a body continuing the prompt.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from perfgym.enamel.pairing import EnamelTiming
from perfgym.enamel.protocol import EnamelTrace, ReferenceFailed, trace_of
from perfgym.enamel.reference import measure_reference
from perfgym.judge.candidate import Candidate
from perfgym.judge.extract import extract
from perfgym.metrics.enamel_levels import EnamelProblem, EnamelSample
from perfgym.sandbox.pyworker import PythonWorkerPool
from perfgym.tasks.generate import ENAMEL_KEY
from perfgym.tasks.task import Task


@dataclass
class ModelRun:
    """One model's scored problems (each with all its samples) and every sample's trace."""

    model: str
    problems: list[EnamelProblem] = field(default_factory=list)
    traces: list[EnamelTrace] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @property
    def min_samples(self) -> int:
        return min((len(p.samples) for p in self.problems), default=0)


def sample_source(task: Task, c: Candidate) -> tuple[str | None, str]:
    """(code, '') for the sample ENAMEL would run, or (None, why) when there is none."""
    if c.source is not None:
        return c.source, ""
    text = c.completion or ""
    ex = extract(text, task.language)
    if ex.source is not None:
        return ex.source, ""
    if text.strip():
        return text, ""  # ENAMEL runs the text after the prompt: a body continues it
    return None, ex.reason


def _nothing(task: Task, model: str, n: int, why: str, sample: int = 0) -> EnamelTrace:
    return EnamelTrace(task_id=task.id, solution=model, sample=sample, correct=False,
                       level_times_s=[None] * n, reference_times_s=[], limit_s=0.0,
                       stopped=why)  # fmt: skip


def evaluate_candidates(
    tasks: Sequence[Task],
    candidates: Sequence[Candidate],
    workers: PythonWorkerPool,
    repeats: int,
    progress: Callable[[int, int], None] | None = None,
    on_traces: Callable[[list[EnamelTrace]], None] | None = None,
    timing: EnamelTiming = EnamelTiming.SEQUENTIAL,
) -> tuple[dict[str, ModelRun], list[str]]:
    """({model: run}, excluded) over the scored problems among `tasks` (`excluded`: problems
    whose reference failed here, left out for every model, each with the reason)."""
    scored = [t for t in tasks if t.metadata[ENAMEL_KEY].get("scored", True)]
    by_task: dict[str, dict[str, list[Candidate]]] = defaultdict(lambda: defaultdict(list))
    for c in candidates:
        by_task[c.task.id][c.model].append(c)
    models = sorted({c.model for c in candidates})
    most = {m: max(len(by_task[t][m]) for t in by_task if m in by_task[t]) for m in models}
    runs = {m: ModelRun(m) for m in models}
    excluded: list[str] = []
    for i, task in enumerate(scored):
        n_levels = len(task.metadata[ENAMEL_KEY]["levels"])
        samples = by_task.get(task.id, {})
        new: list[EnamelTrace] = []
        try:
            ref = measure_reference(task, workers, repeats) if samples else None
        except ReferenceFailed as exc:
            excluded.append(f"excluded: {exc}")
            if progress is not None:
                progress(i + 1, len(scored))
            continue
        for m in models:
            mine = sorted(samples.get(m, []), key=lambda c: c.sample)
            if not mine:  # counted as `most[m]` wrong samples: k is never limited by it
                runs[m].missing.append(task.id)
                new.append(_nothing(task, m, n_levels, "missing: no sample for this problem"))
                wrong = EnamelSample(correct=False, level_times_s=[None] * n_levels)
                runs[m].problems.append(_zero_problem(task, n_levels, [wrong] * most[m]))
                continue
            assert ref is not None
            got: list[EnamelSample] = []
            for c in mine:
                code, why = sample_source(task, c)
                if code is None:
                    got.append(EnamelSample(correct=False, level_times_s=[None] * n_levels))
                    new.append(_nothing(task, m, n_levels, f"no code: {why}", c.sample))
                    continue
                problem, trace = trace_of(task, m, ref, code, workers, repeats, c.sample,
                                          timing)  # fmt: skip
                got.append(problem.samples[0])
                new.append(trace)
            runs[m].problems.append(EnamelProblem(
                task_id=task.id, reference_times_s=ref.level_times_s,
                level_limits_s=[ref.limit_s] * n_levels, samples=got))  # fmt: skip
        for tr in new:
            runs[tr.solution].traces.append(tr)
        if on_traces is not None:
            on_traces(new)
        if progress is not None:
            progress(i + 1, len(scored))
    return runs, excluded


def _zero_problem(task: Task, n_levels: int, samples: list[EnamelSample]) -> EnamelProblem:
    # No reference was needed (nothing runs): placeholder limits above the zero reference.
    return EnamelProblem(task_id=task.id, reference_times_s=[0.0] * n_levels,
                         level_limits_s=[1.0] * n_levels, samples=samples)  # fmt: skip
