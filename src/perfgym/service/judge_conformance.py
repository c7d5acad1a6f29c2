"""`check_judge(backend)`: what every judging backend (local, service, Ray) must get right.

It judges a fixed set of real Python candidates (STDIO and FUNCTION tasks, every stage, a
timeout, duplicate labels across tasks) and checks stages, order, labels and measurements.
Results from two backends can then be compared with `essence`.
"""

from __future__ import annotations

from typing import Any

from perfgym.judge.backend import JudgeBackend
from perfgym.judge.candidate import Candidate
from perfgym.judge.verdict import Stage, Verdict
from perfgym.sandbox.conformance import ConformanceError
from perfgym.tasks.task import Language, Oracle, Solution, Task, TaskKind, TestCase

_SUM = "import sys\nd = sys.stdin.read().split()\nprint(sum(map(int, d[1:])))\n"
_ADD = "def add(a, b):\n    return a + b\n"


def _sum_task() -> Task:
    return Task(
        id="conformance-sum", family="conformance", language=Language.PYTHON,
        kind=TaskKind.STDIO, goal="Print the sum of n integers.",
        baseline=Solution(label="baseline", source=_SUM),
        references=[Solution(label="reference", source=_SUM)],
        tests=[TestCase(id="t1", stdin="3\n1 2 3\n", expected="6"),
               TestCase(id="t2", stdin="1\n-5\n", expected="-5")],
        workloads=[TestCase(id="w1", stdin="4\n10 20 30 40\n")],
        oracle=Oracle(kind="tokens"), time_limit_s=2.0,
    )  # fmt: skip


def _add_task() -> Task:
    return Task(
        id="conformance-add", family="conformance", language=Language.PYTHON,
        kind=TaskKind.FUNCTION, entry_point="add", goal="Return a + b.",
        baseline=Solution(label="baseline", source=_ADD),
        references=[Solution(label="reference", source=_ADD)],
        tests=[TestCase(id="t1", args=[1, 2], expected=3)],
        workloads=[TestCase(id="w1", args=[5, 6])],
        oracle=Oracle(kind="exact"),
    )  # fmt: skip


def candidates() -> tuple[list[Candidate], list[tuple[Stage, str]]]:
    """The fixed candidates and the (stage, detail) each must get."""
    s, a = _sum_task(), _add_task()
    cases: list[tuple[Candidate, Stage, str]] = [
        (Candidate(s, completion=f"Here:\n```python\n{_SUM}```", model="m", sample=0), Stage.OK, ""),
        (Candidate(s, source="print(42)\n", model="m", sample=1), Stage.WO, "WRONG_OUTPUT"),
        (Candidate(s, source="raise SystemExit(3)\n", model="m", sample=2), Stage.NR, "RUNTIME_ERROR"),
        (Candidate(s, source="while True:\n    pass\n", model="m", sample=3), Stage.NR, "TIMEOUT"),
        (Candidate(s, source="def broken(:\n", model="m", sample=4), Stage.NC, ""),
        (Candidate(s, completion="I will not write code.", model="m", sample=5), Stage.NX, ""),
        # The same labels on another task: a backend must not mix the two up.
        (Candidate(a, source=_ADD, model="m", sample=0), Stage.OK, ""),
        (Candidate(a, source="def add(a, b):\n    return a - b\n", model="m", sample=1),
         Stage.WO, "WRONG_OUTPUT"),
    ]  # fmt: skip
    return [c for c, _, _ in cases], [(st, d) for _, st, d in cases]


def essence(v: Verdict) -> tuple[Any, ...]:
    """Everything two backends must agree on (all but measured durations)."""
    return (v.task_id, v.model, v.sample, v.stage, v.detail, v.infra_error, v.source,
            v.extraction_rule, [(t.id, t.passed, t.status) for t in v.tests])  # fmt: skip


def _expect(cond: bool, what: str) -> None:
    if not cond:
        raise ConformanceError(what)


def check_judge(backend: JudgeBackend) -> list[Verdict]:
    """Judge the fixed candidates through `backend`; raise ConformanceError on any mistake."""
    cands, wanted = candidates()
    progress: list[tuple[int, int]] = []
    verdicts = backend.judge_many(cands, lambda d, n: progress.append((d, n)))
    _expect(len(verdicts) == len(cands), f"{len(verdicts)} verdicts for {len(cands)} candidates")
    for c, v, (stage, detail) in zip(cands, verdicts, wanted, strict=True):
        where = f"{c.task.id}/{c.model}#{c.sample}"
        _expect((v.task_id, v.model, v.sample) == (c.task.id, c.model, c.sample),
                f"{where}: verdict labelled {v.task_id}/{v.model}#{v.sample}")  # fmt: skip
        _expect(not v.infra_error, f"{where}: infrastructure error: {v.reason}")
        _expect(
            v.stage is stage, f"{where}: stage {v.stage.value}, want {stage.value} ({v.reason})"
        )
        if detail:
            _expect(v.detail == detail, f"{where}: detail {v.detail!r}, want {detail!r}")
        if stage is Stage.OK:
            t = v.candidate
            _expect(t is not None and t.estimate_s is not None and t.estimate_s > 0,
                    f"{where}: a correct candidate has no duration")  # fmt: skip
            _expect(bool(v.machine), f"{where}: no machine fingerprint")
    _expect(bool(progress) and progress[-1] == (len(cands), len(cands)),
            f"progress did not reach {len(cands)}/{len(cands)}: {progress[-3:]}")  # fmt: skip
    return verdicts
