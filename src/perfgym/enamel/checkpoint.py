"""`EnamelCheckpoint`: ENAMEL's per-problem results written as produced, an interrupted run of the
same command resumed from its results file (one `EnamelTrace` a line; a trace rebuilds its
`EnamelProblem` exactly, see `problem_of`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from perfgym.enamel.protocol import EnamelTrace
from perfgym.machine import fingerprint
from perfgym.metrics.enamel_levels import EnamelProblem, EnamelSample
from perfgym.store.checkpoint import ResumeFrom, run_key, summarise_problems
from perfgym.store.journal import ResultsJournal
from perfgym.store.keys import task_digest
from perfgym.store.results_file import header as results_header
from perfgym.store.results_file import scan_results
from perfgym.tasks.task import Task

#: The mark `evaluate` puts on a problem whose reference fails (no problem to score).
EXCLUDED = "excluded"


def problem_of(trace: EnamelTrace) -> EnamelProblem | None:
    """The scored problem a trace records (None for an excluded one): one sample, the level
    limit repeated per level, as `evaluate_problem` builds it."""
    if trace.stopped.startswith(EXCLUDED):
        return None
    sample = EnamelSample(correct=trace.correct, level_times_s=trace.level_times_s)
    return EnamelProblem(task_id=trace.task_id, reference_times_s=trace.reference_times_s,
                         level_limits_s=[trace.limit_s] * len(trace.level_times_s),
                         samples=[sample])  # fmt: skip


class EnamelCheckpoint:
    """The results file of one `perfgym eval enamel` run while it runs.

    The same command (same problems by content, solution sets, repeats, machine) finds an
    unfinished file of its own and reuses every problem result in it.
    """

    def __init__(
        self,
        out: Path,
        tasks: Sequence[Task],
        labels: Sequence[str],
        *,
        resume: ResumeFrom,
        header_fields: dict[str, Any],
    ) -> None:
        self.labels = list(labels)
        self.order = [t.id for t in tasks]
        repeats = str(header_fields.get("repeats", ""))
        # A run resumes only in its own timing; ENAMEL's order keeps the key it always had.
        timing = str(header_fields.get("timing", "sequential"))
        order = [] if timing == "sequential" else [timing]
        parts = [fingerprint(), repeats, *order, *self.labels, *(task_digest(t) for t in tasks)]
        self.run_key = run_key("perfgym eval enamel", parts)
        self.resumed_from = resume.find(out, self.run_key)
        self.path = self.resumed_from or out
        self.notes: list[str] = []
        self.traces: dict[tuple[str, str], EnamelTrace] = {}
        if self.resumed_from is not None:
            self._reuse(self.resumed_from)
        self.reused = len(self.traces)
        head = results_header(**header_fields, run_key=self.run_key, complete=False)
        self.journal = ResultsJournal(self.path, head, self._ordered())

    def _reuse(self, path: Path) -> None:
        scan = scan_results(path)
        problems = list(scan.problems)
        wanted = set(self.order)
        for n, obj in scan.records:
            try:
                tr = EnamelTrace.model_validate(obj)
            except ValueError as exc:
                problems.append(f"{path}:{n}: not an ENAMEL result ({str(exc).splitlines()[0]})")
                continue
            if tr.solution in self.labels and tr.task_id in wanted:
                self.traces[(tr.solution, tr.task_id)] = tr
        if problems:
            self.notes.append(summarise_problems(problems))

    def _ordered(self) -> list[EnamelTrace]:
        return [self.traces[(lb, t)] for lb in self.labels for t in self.order
                if (lb, t) in self.traces]  # fmt: skip

    def todo(self, label: str, tasks: Sequence[Task]) -> list[Task]:
        """The tasks still to evaluate with solution set `label`."""
        return [t for t in tasks if (label, t.id) not in self.traces]

    def reused_of(self, label: str) -> int:
        return sum(lb == label for lb, _ in self.traces)

    def finished(self, label: str, trace: EnamelTrace) -> None:
        """One problem's result, written at once."""
        self.traces[(label, trace.task_id)] = trace
        self.journal.append([trace])

    def results(self, label: str) -> tuple[list[EnamelProblem], list[EnamelTrace]]:
        """(scored problems, traces) of `label` in task order, reused and fresh together."""
        traces = [self.traces[(label, t)] for t in self.order if (label, t) in self.traces]
        problems = [p for p in map(problem_of, traces) if p is not None]
        return problems, traces

    @property
    def kept(self) -> int:
        return len(self.traces)

    def finish(self) -> None:
        """The results file rewritten complete, every solution set's results in task order."""
        self.journal.finish(self._ordered(), reused=self.reused)

    def close(self) -> None:
        self.journal.close()

    def resume_line(self) -> str | None:
        if self.resumed_from is None:
            return None
        return f"resuming {self.resumed_from}: reused {self.reused} problem results"
