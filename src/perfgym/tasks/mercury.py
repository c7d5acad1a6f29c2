"""Mercury (Du et al. 2024, Elfsong/Mercury on the Hugging Face hub) as a perfgym `Suite`.

Published schema (hub split `eval`; fields read by Mercury's own `src/evaluator.py`,
`src/sandbox.py` and bigcode-evaluation-harness `tasks/mercury.py`): `slug_name` (the task
id), `pretty_content` (list of statement strings, the first shown), `prompt` (the
`class Solution` stub), `entry_point` (the method name), `test_cases` (a JSON string: a list of
`{"input": [...], "expected": ...}`), `convert_offline` and `evaluate_offline` (Python
sources defining `convert_offline((inputs, expected))` and
`evaluate_offline(inputs, outputs, expected)`), `solutions` (a list of `{"solution": source,
"runtime": published runtime}`); optional `id`, `difficulty`, `meta_info`, `generator_code`,
`convert_online`, `evaluate_online` (kept in metadata).

Each record becomes a FUNCTION task judged the way Mercury's sandbox judges: an `assertion`
oracle whose `check(Solution)` runs every test case through `convert_offline`, calls
`Solution().<entry_point>(*inputs)` and asserts `evaluate_offline`; the namespace Mercury
gives a solution (typing, collections, `ListNode`, `TreeNode`, ...) is part of the stored
solutions' sources. The published solutions are the pool, each with its published runtime
(`StoredMeasurement`, seconds; a string such as "44 ms" or a bare number read as
milliseconds, LeetCode's unit); the slowest is the baseline and the fastest the reference.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from perfgym.tasks.published import Record, read_file, read_hub, unique_ids
from perfgym.tasks.suite_model import Suite
from perfgym.tasks.task import (
    Language,
    Oracle,
    Solution,
    Split,
    StoredMeasurement,
    Task,
    TaskKind,
    TestCase,
)

HUB_NAME = "Elfsong/Mercury"
HUB_SPLITS = ("eval",)

#: Task metadata key: why the judge cannot run the task yet (a class method is the entry).
NOT_RUNNABLE = "not_runnable"
CLASS_ENTRY = (
    "LeetCode-style `class Solution` method: perfgym's function runner calls top-level "
    "functions only"
)

#: What Mercury's sandbox defines before a solution runs (its `unsafe_execute` namespace).
NAMESPACE = """\
import re, itertools, collections, heapq, bisect, string, sys, functools, math, copy
from math import floor, ceil, factorial, sqrt, inf
from sys import maxsize
from bisect import bisect_left, bisect_right
from itertools import permutations, zip_longest
from heapq import heappush, heappop, heapify
from collections import deque, defaultdict, OrderedDict
from typing import List, Optional, Tuple
from functools import lru_cache, cache


class ListNode(object):
    def __init__(self, val=0, next=None):
        self.val = val
        self.next = next


class TreeNode(object):
    def __init__(self, val=0, left=None, right=None):
        self.val = val
        self.left = left
        self.right = right
"""

_CHECK = """\
import json as _json

{convert}

{evaluate}

_CASES = _json.loads({cases!r})


def check(candidate):
    solution = candidate()
    for _case in _CASES:
        inputs, expected = convert_offline((_case["input"], _case["expected"]))
        outputs = solution.{entry}(*inputs)
        assert evaluate_offline(inputs, outputs, expected), "wrong answer"
"""

_RUNTIME = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(ms|s)?\s*$")


def load_mercury(path: str | Path | None = None) -> Suite:
    """Mercury from a local file in the published schema, else from the hub."""
    if path is None:
        records, source = read_hub(HUB_NAME, HUB_SPLITS), f"hub:{HUB_NAME}"
    else:
        records, source = read_file(Path(path)), str(Path(path).resolve())
    return mercury_suite(records, source)


def mercury_suite(records: Sequence[Record], source: str) -> Suite:
    """The suite of already read records."""
    tasks = [mercury_task(r) for r in records]
    unique_ids([(t.id, r) for t, r in zip(tasks, records, strict=True)])
    return Suite(
        name="mercury",
        tasks=tasks,
        source=source,
        metadata={
            "benchmark": "Mercury",
            "upstream": f"https://huggingface.co/datasets/{HUB_NAME}",
            "metric": "mercury-beyond (Beyond@k against the pool's runtime range)",
        },
    )


def runtime_s(value: Any, record: Record, where: str) -> float:
    """A published runtime in seconds: "44 ms", "0.5 s", or a bare number of milliseconds."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise record.fail(f"{where}: runtime {value!r} is not a number or 'N ms'")
    match = _RUNTIME.match(str(value))
    if not match:
        raise record.fail(f"{where}: runtime {value!r} is not a number or 'N ms'")
    number = float(match.group(1))
    if number <= 0:
        raise record.fail(f"{where}: runtime {value!r} must be > 0")
    return number if match.group(2) == "s" else number / 1000.0


def _pool(record: Record) -> list[Solution]:
    raw = record.field("solutions", list)
    if not raw:
        raise record.fail("field 'solutions' is empty")
    pool = []
    for i, item in enumerate(raw):
        where = f"solutions[{i}]"
        if not isinstance(item, dict):
            raise record.fail(f"{where}: expected an object")
        source = item.get("solution")
        if not isinstance(source, str) or not source.strip():
            raise record.fail(f"{where}: missing field 'solution'")
        stored = None
        if item.get("runtime") is not None:
            stored = StoredMeasurement(
                median_s=runtime_s(item["runtime"], record, where),
                source=f"{HUB_NAME} {where}.runtime (published)",
                machine="published",
            )
        pool.append(Solution(label=f"pool-{i}", source=f"{NAMESPACE}\n{source}", stored=stored))
    return pool


def _cases(record: Record) -> list[dict[str, Any]]:
    cases = record.json_field("test_cases")
    if not isinstance(cases, list) or not cases:
        raise record.fail("field 'test_cases': expected a non-empty list of test cases")
    for i, case in enumerate(cases):
        if not isinstance(case, dict) or "input" not in case or "expected" not in case:
            raise record.fail(f"test_cases[{i}]: needs 'input' and 'expected'")
        if not isinstance(case["input"], list):
            raise record.fail(f"test_cases[{i}].input: expected a list of arguments")
    return cases


def _seconds(solution: Solution) -> float:
    assert solution.stored is not None and solution.stored.median_s is not None
    return solution.stored.median_s


def mercury_task(record: Record) -> Task:
    """One Mercury record as a Task (errors name the record and the field)."""
    slug = record.text("slug_name")
    if "/" in slug or slug != slug.strip():
        raise record.fail(f"field 'slug_name': {slug!r} is not a task id")
    content = record.field("pretty_content", list)
    if not content or not isinstance(content[0], str):
        raise record.fail("field 'pretty_content': expected a non-empty list of strings")
    entry = record.text("entry_point")
    if not entry.isidentifier():
        raise record.fail(f"field 'entry_point': {entry!r} is not a method name")
    prompt = record.text("prompt")
    cases = _cases(record)
    checker = _CHECK.format(
        convert=record.text("convert_offline"),
        evaluate=record.text("evaluate_offline"),
        cases=json.dumps(cases),
        entry=entry,
    )
    pool = _pool(record)
    timed = [s for s in pool if s.stored is not None and s.stored.median_s is not None]
    by_time = sorted(timed, key=_seconds) or pool
    baseline, reference = by_time[-1], by_time[0]
    extra = {
        k: record.data[k]
        for k in ("id", "difficulty", "meta_info")
        if record.data.get(k) is not None
    }
    return Task(
        id=slug,
        family=slug,
        language=Language.PYTHON,
        kind=TaskKind.FUNCTION,
        title=slug,
        goal=f"{content[0]}\n{prompt}",
        interface=prompt,
        metric="wall time of all test cases (Mercury's runtime)",
        correctness_rule="evaluate_offline holds on every test case",
        baseline=baseline.model_copy(update={"label": "baseline"}),
        references=[reference.model_copy(update={"label": "reference"})],
        pool=pool,
        tests=[TestCase(id="check")],
        oracle=Oracle(kind="assertion", checker=checker),
        entry_point="Solution",
        split=Split.TEST,
        metadata={
            "mercury": {**extra, "method": entry, "test_cases": len(cases)},
            "source_record": record.where,
            NOT_RUNNABLE: CLASS_ENTRY,
        },
    )
