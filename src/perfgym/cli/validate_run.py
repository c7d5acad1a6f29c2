"""One `perfgym validate` run: its tasks judged on the chosen backend in batches (one task at a
time on the local pool, one per node on Ray), each row written as it is produced, the rows of
an earlier run reused (`--resume`), and the run's timing for its summary."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from perfgym.cli.output import err_console, fail

if TYPE_CHECKING:
    from perfgym.judge.backend import JudgeBackend
    from perfgym.judge.validate import TaskValidation
    from perfgym.judge.validate_rerun import RerunPolicy
    from perfgym.judge.validation_summary import ValidationSummary
    from perfgym.store.rows_file import RowsFile
    from perfgym.tasks.suite_model import Suite
    from perfgym.tasks.task import Task


class ValidateRun:
    """The tasks to validate and how; `run` judges them, `summary` sums up the rows."""

    def __init__(self, suite: Suite, tasks: list[Task], *, repeats: int, min_speedup: float,
                 time_limit_s: float | None, rerun: RerunPolicy | None, out: Path | None,
                 resume: bool, backend: str, address: str | None, drawn: dict[str, Any] | None,
                 quiet: bool) -> None:  # fmt: skip
        self.suite, self.tasks = suite, tasks
        self.repeats, self.min_speedup, self.time_limit_s = repeats, min_speedup, time_limit_s
        self.rerun = rerun
        self.out, self.resume, self.backend, self.address = out, resume, backend, address
        self.drawn, self.quiet = drawn, quiet
        self.reused = 0
        self.ran: list[TaskValidation] = []
        self.cores = 1
        self.wall_s = 0.0
        self._load0 = os.getloadavg()[0]
        self._keys: dict[str, str] = {}

    def run(self, show: Callable[[list[TaskValidation], BaseException], int]
            ) -> list[TaskValidation]:  # fmt: skip
        """The rows of every task, in the tasks' order; on Ctrl-C or SIGTERM the finished ones
        are kept (in --out) and shown with `show`, and the command exits 130 (143)."""
        from rich.progress import Progress

        from perfgym.cli.interrupted import exit_code, said, stop_on_sigterm
        from perfgym.errors import PerfgymError
        from perfgym.judge import JudgeConfig
        from perfgym.judge.backend import get_backend
        from perfgym.judge.validate import validate_batch, validation_config

        config = validation_config(JudgeConfig(repeats=self.repeats, **(
            {"time_limit_s": self.time_limit_s} if self.time_limit_s else {})))  # fmt: skip
        rows_file = self._rows_file(config)
        done: dict[str, TaskValidation] = dict(rows_file.done) if rows_file is not None else {}
        self.reused = sum(t.id in done for t in self.tasks)
        todo = [t for t in self.tasks if t.id not in done]
        if self.reused:
            err_console.print(f"reusing {self.reused} finished row(s) of {escape(str(self.out))}",
                              highlight=False)  # fmt: skip
        restore = stop_on_sigterm()
        t0 = time.monotonic()
        backend: JudgeBackend | None = None
        try:
            backend = get_backend(self.backend, config, address=self.address)
            self.cores = _cores(backend)
            batch = _batch_size(backend)
            with Progress(console=err_console, transient=True, disable=self.quiet) as bar:
                job = bar.add_task(f"validating {self.suite.name}", total=len(self.tasks),
                                   completed=self.reused)  # fmt: skip
                for i in range(0, len(todo), batch):
                    chunk = todo[i : i + batch]
                    start = time.monotonic()
                    got = validate_batch(backend, chunk, self.min_speedup, self.rerun)
                    took = time.monotonic() - start
                    for task, row in zip(chunk, got, strict=True):
                        row.task_key = self._keys.get(task.id, "")
                        row.wall_s = took
                        done[task.id] = row
                        self.ran.append(row)
                        if rows_file is not None:
                            rows_file.add(row)
                    bar.update(job, completed=self.reused + len(self.ran))
        except KeyboardInterrupt as exc:
            self.wall_s = time.monotonic() - t0
            rows = [done[t.id] for t in self.tasks if t.id in done]
            kept = f"; each finished row is in {escape(str(self.out))}" if self.out else ""
            err_console.print(f"{said(exc)} after {len(rows)} of {len(self.tasks)} tasks{kept}",
                              soft_wrap=True, highlight=False)  # fmt: skip
            _close(backend, rows_file)
            show(rows, exc)
            raise typer.Exit(exit_code(exc)) from None
        except PerfgymError as exc:
            _close(backend, rows_file)
            fail(str(exc))
        finally:
            restore()
        self.wall_s = time.monotonic() - t0
        _close(backend, rows_file)
        return [done[t.id] for t in self.tasks]

    def _rows_file(self, config: Any) -> RowsFile[TaskValidation] | None:
        """The --out file, opened (its reusable rows read with --resume); the tasks' content
        keys, which each new row records."""
        from perfgym.audit.content import content_key
        from perfgym.cli.validate_rows import VALIDATION_ROWS, validation_header
        from perfgym.errors import PerfgymError
        from perfgym.store.rows_file import RowsFile

        if self.out is None:
            return None
        self._keys = {t.id: content_key(t) for t in self.tasks}
        header = validation_header(self.suite.name, config, self.min_speedup, self.time_limit_s,
                                   self.rerun)  # fmt: skip
        try:
            return RowsFile(self.out, header, VALIDATION_ROWS, resume=self.resume,
                            keys=self._keys)  # fmt: skip
        except PerfgymError as exc:
            fail(str(exc))
        except OSError as exc:
            fail(f"cannot write results {self.out}: {exc.strerror or exc}")

    def summary(self, rows: list[TaskValidation]) -> ValidationSummary:
        from perfgym.judge.validation_summary import summarise

        population = self.drawn["population"] if self.drawn else len(self.tasks)
        return summarise(rows, ran=self.ran, wall_s=self.wall_s, cores=self.cores,
                         population=population)  # fmt: skip

    def load(self) -> dict[str, float]:
        """The machine's 1-minute load average when the run started and now."""
        return {"start": self._load0, "end": os.getloadavg()[0]}


def _cores(backend: JudgeBackend) -> int:
    """The cores the backend measures on: every alive node's on Ray, this machine's usable
    ones on the local pool."""
    cluster = getattr(backend, "cluster", None)
    if cluster is not None:
        return int(sum(n["Resources"].get("CPU", 0) for n in cluster.nodes())) or 1
    from perfgym.sandbox.pool import usable_cores

    return len(usable_cores())


def _batch_size(backend: JudgeBackend) -> int:
    """Tasks judged together: one per Ray node (each task is judged wholly on one node), one
    on the local pool (its solutions already fill the cores)."""
    cluster = getattr(backend, "cluster", None)
    return max(1, len(cluster.nodes())) if cluster is not None else 1


def _close(backend: JudgeBackend | None, rows_file: RowsFile[Any] | None) -> None:
    if rows_file is not None:
        rows_file.close()
    if backend is not None:
        backend.close()
