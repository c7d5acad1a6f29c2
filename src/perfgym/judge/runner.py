"""Running one prepared variant on one test case or workload, in the sandbox or a warm worker."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from perfgym.judge.variant import Variant
from perfgym.sandbox.base import Sandbox
from perfgym.sandbox.execution import Status
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.pyworker import PythonWorkerPool
from perfgym.tasks.task import Task, TaskKind, TestCase


@dataclass
class Outcome:
    """What one run produced and cost, as seen from outside the program."""

    status: Status
    output: Any = None
    wall_s: float | None = None
    cpu_s: float | None = None
    peak_rss_mb: float | None = None
    memory_integral_mb_s: float | None = None
    reported_s: float | None = None  # the program's own timer (harness elapsed_ns): untrusted
    instructions: int | None = None  # hardware counters, or Valgrind in deterministic mode
    harness_ok: bool | None = None
    message: str = ""


def run_case(
    task: Task,
    variant: Variant,
    case: TestCase,
    *,
    sandbox: Sandbox,
    workers: PythonWorkerPool | None,
    limits: Limits,
    cpu: int | None = None,
) -> Outcome:
    """Run `variant` on `case` once (the case's input already materialised)."""
    if task.kind is TaskKind.FUNCTION:
        assert workers is not None and variant.source is not None
        return _call(task, variant.source, case, workers, limits)
    ex = sandbox.run(variant.argv, stdin=case.stdin, binds=variant.binds, limits=limits, cpu=cpu)
    m = ex.measurement
    out = Outcome(
        status=ex.status,
        output=ex.stdout_text,
        wall_s=m.wall_s if m else None,
        cpu_s=m.cpu_s if m else None,
        peak_rss_mb=m.peak_rss_mb if m else None,
        memory_integral_mb_s=m.memory_integral_mb_s if m else None,
        instructions=m.instructions if m else None,
        message=ex.reason if ex.status is not Status.OK else "",
    )
    if ex.status is not Status.OK and ex.stderr:
        out.message = f"{out.message}: {ex.stderr_text.strip()[-300:]}"
    if task.kind is TaskKind.HARNESS:
        _read_harness_line(ex.stdout_text, out)
        if ex.status is Status.RUNTIME_ERROR and out.harness_ok is False:
            out.status = Status.OK  # it ran and reported a wrong answer: WO, not NR
    return out


def _read_harness_line(stdout: str, out: Outcome) -> None:
    """PerfCodeBench harnesses print one JSON line with `ok` and `elapsed_ns`."""
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and "ok" in obj:
            out.harness_ok = bool(obj["ok"])
            ns = obj.get("elapsed_ns")
            if isinstance(ns, int | float) and ns >= 0:
                out.reported_s = float(ns) / 1e9
            return
    out.harness_ok = None
    if out.status is Status.OK:
        out.message = "the harness printed no JSON result line"


def _call(
    task: Task, source: str, case: TestCase, workers: PythonWorkerPool, limits: Limits
) -> Outcome:
    if task.oracle.kind == "assertion":
        # HumanEval style: the solution, then its test code, then check(entry_point).
        program = f"{source}\n\n{task.oracle.checker}\n\ncheck({task.entry_point})\n"
        r = workers.call(program, None, (), limits)
    else:
        r = workers.call(source, task.entry_point, case.args or [], limits)
    return Outcome(
        status=r.status,
        output=r.value,
        wall_s=r.wall_s,
        cpu_s=r.cpu_s,
        peak_rss_mb=r.peak_rss_mb,
        reported_s=r.reported_call_s,
        message=r.error,
    )
