"""Tiny tasks built to fail or to pass each audit probe, and a helper that audits one."""

from __future__ import annotations

from perfgym.audit.registry import select_probes
from perfgym.audit.results import TaskAudit
from perfgym.audit.run import audit_task
from perfgym.judge import Judge, JudgeConfig
from perfgym.tasks.task import Language, Oracle, Solution, Task, TaskKind, TestCase

#: Sum of n integers, the work in a Python loop (baseline) or in the builtin (reference).
SUM = "import sys\nd = sys.stdin.read().split()\nprint(sum(map(int, d[1:])))\n"
SLOW_SUM = (
    "import sys\nd = sys.stdin.read().split()\nt = 0\n"
    "for x in d[1:]:\n    for _ in range(20):\n        t += int(x)\nprint(t // 20)\n"
)
#: Makes `n` integers from a seed: hidden workloads come from it.
GENERATOR = (
    "import random\n\ndef generate(size, seed):\n    r = random.Random(seed)\n"
    "    xs = [r.randint(-1000, 1000) for _ in range(size)]\n"
    "    return f\"{size}\\n{' '.join(map(str, xs))}\\n\"\n"
)
PERMISSIVE = "def check(test_input, expected, output):\n    return True\n"
TESTS = [
    TestCase(id="t1", stdin="3\n1 2 3\n", expected="6\n"),
    TestCase(id="t2", stdin="2\n5 5\n", expected="10\n"),
    TestCase(id="t3", stdin="1\n-4\n", expected="-4\n"),
]


def _literal_workload(n: int, seed: int) -> TestCase:
    xs = [(i * 7919 + seed) % 2001 - 1000 for i in range(n)]
    return TestCase(id=f"w{seed}", stdin=f"{n}\n{' '.join(map(str, xs))}\n")


def sum_task(*, hidden: bool, permissive: bool = False, size: int = 20000, **extra: object
             ) -> Task:  # fmt: skip
    """`hidden`: workloads from a generator (the judge draws hidden ones); else literal inputs
    only (what the author saw is what is judged). `permissive`: a checker accepting anything."""
    fields: dict[str, object] = {
        "id": "sum-hidden" if hidden else "sum-fixed",
        "family": "sum", "language": Language.PYTHON, "kind": TaskKind.STDIO,
        "baseline": Solution(label="baseline", source=SLOW_SUM),
        "references": [Solution(label="reference", source=SUM)],
        "tests": TESTS,
        "oracle": Oracle(kind="checker", checker=PERMISSIVE) if permissive
        else Oracle(kind="exact"),
    }  # fmt: skip
    if hidden:
        fields["generator"] = GENERATOR
        fields["workloads"] = [TestCase(id="w1", size=size, seed=1),
                               TestCase(id="w2", size=size, seed=2)]  # fmt: skip
    else:
        fields["workloads"] = [_literal_workload(size, 1), _literal_workload(size, 2)]
    fields.update(extra)
    return Task(**fields)  # type: ignore[arg-type]


def audit(task: Task, probes: list[str], *, repeats: int = 3, mde_repeats: int = 3,
          **config: object) -> TaskAudit:  # fmt: skip
    """`task` audited with `probes` by a real judge, hidden workloads on (as training)."""
    cfg = JudgeConfig(repeats=repeats, hidden_workloads=True, **config)  # type: ignore[arg-type]
    with Judge(cfg) as judge:
        return audit_task(judge, task, select_probes(probes), mde_repeats=mde_repeats)
