"""Store test helpers: verdict builders, a tiny real task, a sandbox that counts its runs."""

from __future__ import annotations

from perfgym.judge.verdict import Stage, TestResult, Timing, Verdict
from perfgym.sandbox.base import Sandbox
from perfgym.sandbox.execution import Status
from perfgym.sandbox.warm import WarmSandbox
from perfgym.tasks.task import Language, Oracle, Solution, Task, TaskKind, TestCase

SUM = "import sys\nd = sys.stdin.read().split()\nprint(sum(map(int, d[1:])))\n"
SLOW_SUM = (
    "import sys\nd = sys.stdin.read().split()\nt = 0\nfor x in d[1:]:\n    t += int(x)\nprint(t)\n"
)


def sum_task(task_id: str = "sum") -> Task:
    return Task(
        id=task_id,
        family="parsing",
        language=Language.PYTHON,
        kind=TaskKind.STDIO,
        goal="Print the sum of n integers.",
        baseline=Solution(label="baseline", source=SLOW_SUM),
        references=[Solution(label="reference", source=SUM)],
        tests=[TestCase(id="t1", stdin="3\n1 2 3\n", expected="6")],
        workloads=[TestCase(id="w1", stdin="4\n10 20 30 40\n")],
        oracle=Oracle(kind="tokens"),
    )


def make_verdict(
    task_id: str = "t", stage: Stage = Stage.OK, estimate: float = 0.5, **kw
) -> Verdict:
    return Verdict(
        task_id=task_id,
        stage=stage,
        language="python",
        tests=[TestResult(id="t1", passed=stage is Stage.OK, status=Status.OK)],
        candidate=Timing(estimate_s=estimate, samples_s=[estimate] * 3, cv=0.0),
        baseline=Timing(estimate_s=1.0, samples_s=[1.0] * 3, cv=0.0),
        **kw,
    )


class CountingSandbox(Sandbox):
    """A real sandbox wrapped to count how many programs it ran (a seam, not a mock)."""

    name = "counting"

    def __init__(self, inner: WarmSandbox) -> None:
        self.inner = inner
        self.config = inner.config
        self.runs = 0

    def run(self, command, **kw):  # type: ignore[no-untyped-def]
        self.runs += 1
        return self.inner.run(command, **kw)

    def close(self) -> None:
        self.inner.close()
