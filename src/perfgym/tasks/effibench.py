"""EffiBench (Huang et al. 2024; huangd1999/EffiBench, hub DONG19/EffiBench) as a `Suite`.

Published schema (the records EffiBench's `src/*_completion.py` and
`src/code_efficiency_calculator.py` read): `problem_idx` (int), `task_name` (the LeetCode
slug), `markdown_description` (the statement), `canonical_solution` (a `class Solution`
program), `small_test_cases` (test code shown in the prompt) and `test_case` (the test code
that is run and timed); both test codes use a variable `solution` bound to `Solution()`, as
EffiBench appends `solution=Solution()` before them. Other fields are kept by name in
`metadata["effibench"]["extra_fields"]`.

Each record becomes a FUNCTION task judged as EffiBench runs it: an `assertion` oracle whose
`check(Solution)` binds `solution = Solution()` and executes `test_case`; the canonical
solution is baseline and reference. EffiBench publishes no runtimes: NET/NMU/NTMU
(`perfgym.metrics.effibench`) compare with the canonical solution measured here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from perfgym.tasks.mercury import CLASS_ENTRY, NOT_RUNNABLE
from perfgym.tasks.published import Record, read_file, read_hub, unique_ids
from perfgym.tasks.suite_model import Suite
from perfgym.tasks.task import Language, Oracle, Solution, Split, Task, TaskKind, TestCase

HUB_NAME = "DONG19/EffiBench"
HUB_SPLITS = ("test", "train")
FIELDS = (
    "problem_idx",
    "task_name",
    "markdown_description",
    "canonical_solution",
    "small_test_cases",
    "test_case",
)

_CHECK = """\
_TEST_CODE = {code!r}


def check(candidate):
    namespace = dict(globals())
    namespace["solution"] = candidate()
    exec(_TEST_CODE, namespace)
"""


def load_effibench(path: str | Path | None = None) -> Suite:
    """EffiBench from a local file in the published schema, else from the hub."""
    if path is None:
        records, source = read_hub(HUB_NAME, HUB_SPLITS), f"hub:{HUB_NAME}"
    else:
        records, source = read_file(Path(path)), str(Path(path).resolve())
    return effibench_suite(records, source)


def effibench_suite(records: Sequence[Record], source: str) -> Suite:
    tasks = [effibench_task(r) for r in records]
    unique_ids([(t.id, r) for t, r in zip(tasks, records, strict=True)])
    return Suite(
        name="effibench",
        tasks=tasks,
        source=source,
        metadata={
            "benchmark": "EffiBench",
            "upstream": "https://github.com/huangd1999/EffiBench",
            "metric": "effibench-net / effibench-nmu / effibench-ntmu",
        },
    )


def effibench_task(record: Record) -> Task:
    """One EffiBench record as a Task (errors name the record and the field)."""
    index = record.field("problem_idx", int)
    if index < 0:
        raise record.fail(f"field 'problem_idx': {index} is negative")
    name = record.text("task_name")
    statement = record.text("markdown_description")
    canonical = record.text("canonical_solution")
    shown = record.text("small_test_cases")
    test_code = record.text("test_case")
    for field, code in (("canonical_solution", canonical), ("test_case", test_code)):
        try:
            compile(code, field, "exec")
        except SyntaxError as exc:
            raise record.fail(
                f"field {field!r}: not Python ({exc.msg}, line {exc.lineno})"
            ) from None
    task_id = f"EffiBench/{index}"
    solution = Solution(label="baseline", source=canonical)
    extra = sorted(k for k in record.data if k not in FIELDS)
    return Task(
        id=task_id,
        family=task_id,
        language=Language.PYTHON,
        kind=TaskKind.FUNCTION,
        title=name,
        goal=f"{statement}\n\n# Test case:\n{shown}",
        interface="class Solution (the method the test case calls on `solution`)",
        metric="execution time, peak memory and memory integral of the test program",
        correctness_rule="every assertion of the test case holds",
        baseline=solution,
        references=[solution.model_copy(update={"label": "reference"})],
        tests=[TestCase(id="check")],
        oracle=Oracle(kind="assertion", checker=_CHECK.format(code=test_code)),
        entry_point="Solution",
        split=Split.TEST,
        metadata={
            "effibench": {"problem_idx": index, "task_name": name, "extra_fields": extra},
            "source_record": record.where,
            NOT_RUNNABLE: CLASS_ENTRY,
        },
    )
