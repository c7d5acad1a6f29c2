"""Correctness tests of a function task in batches: a candidate's tests in as few sandboxed
processes as isolation allows (one per candidate; one per test with `isolate_tests`), each
test under its own limits and with its own verdict.

A batch that ends early at a test (the process crashed, exited or ran out of the test's time)
gives that test its verdict; the tests after it run in a fresh process, unless the run stops
at the first failure (`fail_fast`). Under fail_fast the batches grow (16, 1024, 65536 tests),
so a candidate wrong on its first test costs one short batch, a correct one two. A test
the candidate's process never answered has no result: nothing it did can count as passed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from perfgym.judge.plan import TaskPlan
from perfgym.judge.runner import RunOutcome
from perfgym.sandbox.execution import Status
from perfgym.sandbox.limits import Limits
from perfgym.tasks.humaneval import CHECKER_PASSES_EQUAL
from perfgym.tasks.task import TaskKind, TestCase

#: The first batch's size under fail_fast, and how much each next batch grows.
FIRST_BATCH, BATCH_GROWTH = 16, 64

#: Task metadata key: the task's checker passes every output equal to the expected one (as
#: EvalPlus's does), so equal outputs are judged here without a sandboxed checker call.
EQUAL_PASSES = CHECKER_PASSES_EQUAL


def batchable(plan: TaskPlan) -> bool:
    """Whether the task's tests can run in batches: a function task judged by comparing each
    call's value (HumanEval's assertion oracle runs its own test code instead)."""
    task = plan.task
    return (
        task.kind is TaskKind.FUNCTION
        and task.oracle.kind != "assertion"
        and bool(task.entry_point)
    )


def run_batched(
    plan: TaskPlan,
    source: str,
    tests: Sequence[TestCase],
    limits_of: Callable[[TestCase], Limits],
    *,
    fail_fast: bool,
    isolate: bool,
    limits: Limits | None = None,
) -> Iterator[tuple[TestCase, RunOutcome]]:
    """Each test run and its `RunOutcome`, in order. Stops by itself after a failed run under
    `fail_fast`; the caller stops it (closes the iterator) on a wrong answer. `limits`: the
    batch's own (default the task's; a candidate's forget what they cached)."""
    entry = plan.task.entry_point or ""
    whole = limits or plan.limits
    start, size = 0, FIRST_BATCH
    while start < len(tests):
        if isolate:
            size = 1
        part = tests[start : start + (size if fail_fast or isolate else len(tests))]
        r = plan.workers.batch(source, entry, [(c.args or [], limits_of(c)) for c in part],
                               whole, fail_fast=fail_fast)  # fmt: skip
        if r.status is Status.SANDBOX_ERROR:  # ours, never the program's: ask once more
            r = plan.workers.batch(source, entry, [(c.args or [], limits_of(c)) for c in part],
                                   whole, fail_fast=fail_fast)  # fmt: skip
        if r.status is not Status.OK or not r.cases:
            why = r.error or "the batch ran no test"
            yield part[0], RunOutcome(status=r.status if r.status is not Status.OK else
                                   Status.RUNTIME_ERROR, message=why)  # fmt: skip
            return
        for case, res in zip(part, r.cases, strict=False):
            yield case, RunOutcome(status=res.status, output=res.value, wall_s=res.wall_s,
                                cpu_s=res.cpu_s, peak_rss_mb=r.peak_rss_mb,
                                message=res.error)  # fmt: skip
        start += len(r.cases)
        if len(r.cases) < len(part) and fail_fast:
            return
        size *= BATCH_GROWTH


def equal_passes(plan: TaskPlan, expected: object, output: object) -> bool:
    """An output equal to the expected one, for a task whose checker passes those (both are
    plain builtin values: no custom `__eq__` can act here)."""
    if not plan.task.metadata.get(EQUAL_PASSES):
        return False
    try:
        return bool(output == expected)
    except (RecursionError, TypeError, ValueError):
        return False
