"""The start-up floor: what an empty program of the task's language costs on the task's
clock, run as its measured runs are (a fresh sandboxed process each). A timed run near it
measures start-up, not the work."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

from perfgym.tasks.task import Language, Task, TaskKind, TestCase

if TYPE_CHECKING:
    from perfgym.judge import Judge

EMPTY = {
    Language.PYTHON: "",
    Language.C: "int main(void) { return 0; }\n",
    Language.CPP: "int main() { return 0; }\n",
    Language.JAVASCRIPT: "",
    Language.GO: "package main\n\nfunc main() {}\n",
    Language.JAVA: "public class Main {\n  public static void main(String[] a) {}\n}\n",
    Language.RUST: "fn main() {}\n",
}
#: Runs of the empty program; their median is the floor.
FLOOR_RUNS = 3


def startup_floor(judge: Judge, task: Task) -> tuple[float | None, str]:
    """(the empty program's median cost in seconds, '') or (None, why there is none)."""
    from perfgym.judge.plan import plan_task
    from perfgym.judge.variant import prepare
    from perfgym.sandbox.execution import Status

    if task.kind is not TaskKind.STDIO:
        return None, f"a {task.kind.value} task: its runs are not one process each"
    source = EMPTY.get(task.language)
    if source is None:
        return None, f"no empty program for {task.language.value}"
    config = judge.config.model_copy(update={"hidden_workloads": False})
    plan = plan_task(task, config, judge.sandbox, judge.workers)
    if plan.clock not in ("cpu", "wall"):
        return None, f"the {plan.clock} clock"
    variant = prepare(task, "audit-floor", source=source, sandbox=plan.sandbox,
                      cache=judge.cache, workers=plan.workers)  # fmt: skip
    if not variant.ready:
        return None, "the empty program did not build"
    run = plan.runner()
    times = []
    for _ in range(FLOOR_RUNS):
        out = run(variant, TestCase(id="audit-floor"), None)
        value = out.cpu_s if plan.clock == "cpu" else out.wall_s
        if out.status is Status.OK and value is not None:
            times.append(value)
    if not times:
        return None, "the empty program did not run cleanly"
    return statistics.median(times), ""
