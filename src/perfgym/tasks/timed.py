"""Which inputs of a task are timed: its workloads, or none (correctness only), and the ways
a correctness-only task gets some (`time_largest`, `with_perf_inputs`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from perfgym.tasks.task import Task, TestCase

#: Task metadata key: True where the task's tests are correctness tests only and nothing of
#: it is timed unless it is given workloads (HumanEval+, MBPP+: their tests say nothing of
#: speed; `perfgym eval` reports such a run as "not timed").
NOT_TIMED = "not_timed"


def is_timed(task: Task) -> bool:
    """Whether the judge measures the task: it has workloads, or its tests are its workloads
    (perfgym-core and PerfCodeBench keep theirs); not a correctness-only task without any."""
    return bool(task.workloads) or not task.metadata.get(NOT_TIMED)


def input_size(case: TestCase) -> int:
    """A test's input size: the length of its arguments as JSON (its stdin for stdio)."""
    if case.args is None:
        return len(case.stdin)
    try:
        return len(json.dumps(case.args, default=repr))
    except (TypeError, ValueError, RecursionError):
        return len(repr(case.args))


def time_largest(task: Task, k: int) -> Task:
    """`task` timed on its `k` largest tests by input size (ties: the earlier test first)."""
    if k < 1:
        raise ValueError(f"--time-largest must be at least 1, got {k}")
    ranked = sorted(enumerate(task.tests), key=lambda it: (-input_size(it[1]), it[0]))[:k]
    workloads = [c.model_copy(update={"id": f"timed-{c.id}"}) for _, c in sorted(ranked)]
    return task.model_copy(update={"workloads": workloads,
                                   "metadata": {**task.metadata, NOT_TIMED: False}})  # fmt: skip


def with_perf_inputs(task: Task, inputs: Sequence[Sequence[Any]]) -> Task:
    """`task` timed on the given performance inputs (argument lists, e.g. EvalPerf's)."""
    workloads = [TestCase(id=f"perf-{n}", args=list(a)) for n, a in enumerate(inputs)]
    return task.model_copy(update={"workloads": workloads,
                                   "metadata": {**task.metadata, NOT_TIMED: False}})  # fmt: skip


def read_perf_inputs(lines: Sequence[str], where: str) -> Mapping[str, list[list[Any]]]:
    """Task id -> performance inputs, from JSONL lines as EvalPerf ships them (`task_id` and
    `pe_input`: a list of argument lists, or that list as a JSON string) or with `inputs`.
    ValueError naming the line for anything else."""
    out: dict[str, list[list[Any]]] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"{where}:{n}: not JSON ({exc})") from None
        if not isinstance(rec, dict) or not isinstance(rec.get("task_id"), str):
            raise ValueError(f"{where}:{n}: needs a string task_id")
        raw = rec.get("pe_input", rec.get("inputs"))
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except ValueError as exc:
                raise ValueError(f"{where}:{n}: pe_input is not JSON ({exc})") from None
        if not isinstance(raw, list) or not raw or not all(isinstance(a, list) for a in raw):
            raise ValueError(f"{where}:{n}: pe_input/inputs must be a non-empty list of "
                             "argument lists")  # fmt: skip
        out.setdefault(rec["task_id"], []).extend(raw)
    if not out:
        raise ValueError(f"{where}: no performance inputs")
    return out
