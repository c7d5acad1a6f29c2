"""ENAMEL's reference run of one problem: the expected answers, the level times r_j and limit T.

As ENAMEL's `make_tests`: the expert reference (enamel.csv's solution after the prompt) runs
every generated test; its output is the expected answer; a test of a weighted level is timed
`repeats` times and summarised by Hodges–Lehmann, a weight-0 level (level 0: correctness only)
once; r_j is the largest HL time of level j, and T = α · max_{j: w_j>0} r_j for every level.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from perfgym.enamel.timer import gap_of, trusted_call_time
from perfgym.errors import PerfgymError
from perfgym.metrics.enamel_levels import ENAMEL_WEIGHTS, enamel_level_limits
from perfgym.sandbox.execution import Status
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.pyworker import CallResult, PythonWorkerPool
from perfgym.tasks.generate import ENAMEL_KEY, materialize_all
from perfgym.tasks.task import Task, TestCase
from perfgym.timing.estimators import hodges_lehmann

#: ENAMEL turns the collector off around every timed execution (`unsafe_execute`), for the
#: reference and the samples alike, and runs the code with `time` in its globals; the
#: program's first lines do the same here.
PRELUDE = "import gc as _enamel_gc\n_enamel_gc.disable()\ndel _enamel_gc\nimport time\n"
#: A sample (not the reference) runs with `print` and `input` set to None in its globals, as in
#: ENAMEL's `evaluate1`: a sample that prints fails there, and here.
SAMPLE_PRELUDE = "print = None\ninput = None\n"


class ReferenceFailed(PerfgymError, RuntimeError):
    """The expert reference itself failed on a generated input: the problem cannot be scored."""


@dataclass
class ReferenceRun:
    """What the reference's runs fix for every sample of one problem."""

    levels: list[list[TestCase]]
    expected: dict[str, Any]
    #: The largest outside − reported time of the reference's runs per test: the yardstick of
    #: the candidates' self-reported call times (`enamel.timer`).
    gap_s: dict[str, float]
    level_times_s: list[float]
    limit_s: float
    flags: list[str] = field(default_factory=list)
    #: Each test's HL time r_k (level j's largest is r_j): what ENAMEL's time correction
    #: compares the reference's paired calls with (`enamel.pairing`).
    test_times_s: dict[str, float] = field(default_factory=dict)
    #: The reference as ENAMEL executes it, for its paired calls.
    program: str = ""


def enamel_program(task: Task, source: str, *, sample: bool = True) -> str:
    """What ENAMEL executes for a code sample (or, `sample=False`, the reference): the prompt,
    then the code (a full program or a body continuing the prompt), in ENAMEL's globals."""
    prompt = task.metadata[ENAMEL_KEY]["prompt"]
    prelude = PRELUDE + (SAMPLE_PRELUDE if sample else "")
    return f"{prelude}{prompt}\n{source}\n"


def enamel_levels(task: Task) -> list[list[TestCase]]:
    """The task's generated tests, inputs filled in, level by level."""
    cases = materialize_all(task, [*task.tests, *task.workloads])
    n = len(task.metadata[ENAMEL_KEY]["levels"])
    return [[c for c in cases if c.level == j] for j in range(n)]


def level_repeats(level: int, repeats: int) -> int:
    """ENAMEL repeats only the tests that count: a weight-0 level runs once."""
    return repeats if ENAMEL_WEIGHTS[level] > 0 else 1


def call(workers: PythonWorkerPool, task: Task, program: str, case: TestCase,
         limits: Limits) -> CallResult:  # fmt: skip
    return workers.call(program, task.entry_point, case.args or [], limits)


def measure_reference(task: Task, workers: PythonWorkerPool, repeats: int) -> ReferenceRun:
    ref = task.reference
    assert ref is not None and task.entry_point is not None
    program = enamel_program(task, ref.source, sample=False)
    levels = enamel_levels(task)
    roomy = Limits(wall_s=60.0, memory_mb=task.memory_limit_mb or 4096)
    flags: list[str] = []
    expected: dict[str, Any] = {}
    gap: dict[str, float] = {}
    level_times: list[float] = []
    test_times: dict[str, float] = {}
    for j, cases in enumerate(levels):
        per_test = []
        for case in cases:
            runs = []
            for _ in range(level_repeats(j, repeats)):
                r = call(workers, task, program, case, roomy)
                if r.status is not Status.OK:
                    raise ReferenceFailed(f"{task.id}: the reference fails on {case.id}: {r.error}")
                runs.append(r)
            expected[case.id] = runs[-1].value
            gap[case.id] = max(gap_of(r) for r in runs)
            test_times[case.id] = hodges_lehmann([trusted_call_time(r, flags) for r in runs])
            per_test.append(test_times[case.id])
        level_times.append(max(per_test))
    limit = enamel_level_limits(level_times, ENAMEL_WEIGHTS)[0]
    return ReferenceRun(levels=levels, expected=expected, gap_s=gap,
                        level_times_s=level_times, limit_s=limit,
                        flags=sorted(set(flags)), test_times_s=test_times,
                        program=program)  # fmt: skip
