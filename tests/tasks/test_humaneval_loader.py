"""HumanEval and HumanEval+: all 164 problems load, and their oracles judge real programs."""

from __future__ import annotations

import copy
import gzip
import json
from typing import Any

import pytest

from perfgym.tasks import Suite, TaskKind
from perfgym.tasks._data import data_file
from perfgym.tasks.humaneval import evalplus_checker_source


def _run_assertion_oracle(task: Any, source: str) -> None:
    """The assertion oracle as documented: solution, checker, then check(entry_point)."""
    program = f"{source}\n{task.oracle.checker}\ncheck({task.entry_point})\n"
    exec(compile(program, task.id, "exec"), {"__name__": "__main__"})


def _checker(source: str) -> Any:
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    return namespace["check"]


def test_humaneval_loads_164_with_assertion_oracles(humaneval: Suite) -> None:
    assert len(humaneval) == 164 and humaneval.ids()[0] == "HumanEval/0"
    for task in humaneval.tasks:
        assert task.kind is TaskKind.FUNCTION and task.entry_point
        assert task.oracle.kind == "assertion" and "def check(" in (task.oracle.checker or "")
        assert [c.id for c in task.tests] == ["check"]
        assert task.reference is not None and task.reference.source == task.baseline.source
        assert task.baseline.source.startswith(task.goal)


def test_canonical_solutions_pass_and_wrong_ones_fail(humaneval: Suite) -> None:
    for task in humaneval.tasks:
        _run_assertion_oracle(task, task.baseline.source)
    task = humaneval.get("HumanEval/0")
    wrong = task.goal + "    return False\n"
    with pytest.raises(AssertionError):
        _run_assertion_oracle(task, wrong)
    # The test code of HumanEval/32 calls the prompt's own `poly`: it must see the solution's
    # namespace.
    _run_assertion_oracle(
        humaneval.get("HumanEval/32"), humaneval.get("HumanEval/32").baseline.source
    )


def test_humanevalplus_tests_are_base_then_plus_inputs(humanevalplus: Suite) -> None:
    with gzip.open(data_file("humanevalplus", "HumanEvalPlus.jsonl.gz"), "rt") as handle:
        raw = [json.loads(line) for line in handle]
    assert len(humanevalplus) == 164 == len(raw)
    for task, record in zip(humanevalplus.tasks, raw, strict=True):
        assert task.id == record["task_id"] and task.oracle.kind == "checker"
        inputs = [*record["base_input"], *record["plus_input"]]
        assert [c.args for c in task.tests] == inputs
        assert task.tests[0].id == "base-0" and all(c.expected is None for c in task.tests)
        assert task.metadata["atol"] == record["atol"]
    assert sum(len(t.tests) for t in humanevalplus.tasks) == 124_253


def test_canonical_solutions_pass_the_base_inputs(humanevalplus: Suite) -> None:
    for task in humanevalplus.tasks:
        namespace: dict[str, Any] = {"__name__": "__main__"}
        exec(task.reference.source if task.reference else "", namespace)
        function = namespace[task.entry_point or ""]
        check = _checker(task.oracle.checker or "")
        for case in task.tests:
            if not case.id.startswith("base-"):
                break
            assert case.args is not None
            answer = function(*copy.deepcopy(case.args))
            output = function(*copy.deepcopy(case.args))
            assert check(case.args, answer, output), (task.id, case.id)


def test_evalplus_comparison_rules() -> None:
    exact = _checker(evalplus_checker_source(0, "f"))
    assert exact([], [1, 2], [1, 2]) and not exact([], [1, 2], [1, 3])
    assert not exact([], 3, 3.0000001)  # an int expected gets no tolerance
    assert exact([], 0.1 + 0.2, 0.3)  # a float expected gets atol 1e-6
    assert exact([], [0.5, 1.5], [0.5000001, 1.4999999])
    assert not exact([], [0.5, 1.5], (0.5, 1.5))  # type must match once inexact
    assert not exact([], 1.0, 1.01) and not exact([], 1.0, "1.0")
    tolerant = _checker(evalplus_checker_source(1e-4, "f"))
    assert tolerant([], [1.0, 2.0], [1.00005, 2.0]) and not tolerant([], [1.0, 2.0], [1.0])
    assert tolerant([], 2, 2) and not tolerant([], 2.0, 2.001)
    root = _checker(evalplus_checker_source(1e-4, "find_zero"))
    assert root([[-6, 11, -6, 1]], 1.0, 2.0)  # any root, not the expected one
    assert not root([[-6, 11, -6, 1]], 1.0, 2.5) and not root([[1, 1]], -1.0, "x")
