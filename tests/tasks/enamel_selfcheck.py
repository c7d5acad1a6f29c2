"""Generate ENAMEL inputs and check the references' outputs against the checkers.

Usage: python enamel_selfcheck.py TASK_ID...   (prints one JSON line per task)

For every named task: generate the inputs of every level and report the first case of each
level and the level-0 inputs (their canonical form). For a scored task also run the expert
reference on a fresh copy of each input and ask ENAMEL's checker whether a copy of its output
is accepted against it (a second run of the reference in this one process gave the same
output: it only doubled the reference's time); its line then carries a digest of the task's
generated inputs, which the tests compare with digests taken when perfgym's generation was
checked, input by input, against ENAMEL's own code. Run as subprocesses by
tests/tasks/test_enamel_loader.py, so every input is generated once for all of its tests.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import sys
import time
from typing import Any

from perfgym.tasks.enamel import load_enamel
from perfgym.tasks.generate import enamel_inputs, materialize_all
from perfgym.tasks.task import Task


def canonical(value: Any) -> Any:
    """A hash-seed-independent, type-preserving form of a generated input."""
    if isinstance(value, bool):
        return ["b", value]
    if isinstance(value, int):
        return ["i", str(value)]
    if isinstance(value, float):
        return ["f", value.hex()]
    if isinstance(value, str):
        return ["s", value]
    if value is None:
        return ["n"]
    if isinstance(value, list | tuple):
        return ["l" if isinstance(value, list) else "t", [canonical(v) for v in value]]
    if isinstance(value, set | frozenset):
        return ["S", sorted((canonical(v) for v in value), key=json.dumps)]
    if isinstance(value, dict):
        items = [[canonical(k), canonical(v)] for k, v in value.items()]
        return ["d", sorted(items, key=json.dumps)]
    return ["r", repr(value)]


_dumps = json.dumps


def encoded(value: Any) -> str:
    """`json.dumps(canonical(value))`, written directly (no nested lists built and encoded
    again): the same text, byte for byte, in about a third of the time."""
    kind = type(value)
    if kind is int:
        return '["i", "' + str(value) + '"]'
    if kind is str:
        return '["s", ' + _dumps(value) + "]"
    if kind is list:
        return '["l", [' + ", ".join(map(encoded, value)) + "]]"
    if kind is tuple:
        return '["t", [' + ", ".join(map(encoded, value)) + "]]"
    if kind is float:
        return '["f", ' + _dumps(value.hex()) + "]"
    if kind is bool:
        return '["b", true]' if value else '["b", false]'
    if value is None:
        return '["n"]'
    if kind in (set, frozenset):
        return '["S", [' + ", ".join(sorted(map(encoded, value))) + "]]"
    if kind is dict:
        pairs = ("[" + encoded(k) + ", " + encoded(v) + "]" for k, v in value.items())
        return '["d", [' + ", ".join(sorted(pairs)) + "]]"
    return _dumps(canonical(value))  # a subclass: canonical's own reading of it


def inputs_digest(task: Task, levels: range = range(4)) -> str:
    """sha256 over the canonical forms of a task's generated inputs, level by level."""
    digest = hashlib.sha256()
    for level in levels:
        for case in enamel_inputs(task, level):
            digest.update(encoded(case.args).encode())
    return digest.hexdigest()


def _fresh(value: Any) -> Any:
    """A deep copy of a generated input (builtin types only): pickle's round trip, the same
    copy as copy.deepcopy (shared parts stay shared) at a fraction of its cost."""
    return pickle.loads(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))


def check_task(task: Task) -> dict[str, object]:
    """Every level's inputs generated; the first case of each level and the level-0 inputs
    reported; a scored task's reference checked on every input, with the inputs' digest."""
    assert task.reference is not None and task.entry_point and task.oracle.checker
    firsts = materialize_all(task, [task.tests[0], *task.workloads[::4]])
    levels = [enamel_inputs(task, level) for level in range(4)]
    out: dict[str, object] = {
        "id": task.id,
        "firsts": [[c.id, c.level, isinstance(c.args, list) and bool(c.args)] for c in firsts],
        "level0": [encoded(case.args) for case in levels[0]],
    }
    if not task.metadata["enamel"]["scored"]:
        return out
    solution: dict[str, Any] = {"__name__": "__main__"}
    exec(compile(task.reference.source, f"<reference {task.id}>", "exec"), solution)
    function = solution[task.entry_point]
    checker: dict[str, Any] = {"__name__": "__checker__"}
    exec(compile(task.oracle.checker, f"<checker {task.id}>", "exec"), checker)
    check = checker["check"]
    failures: list[str] = []
    digest = hashlib.sha256()
    cases = 0
    started = time.perf_counter()
    for level in levels:
        for case in level:
            assert case.args is not None
            digest.update(encoded(case.args).encode())
            answer = function(*_fresh(case.args))
            output = _fresh(answer)
            cases += 1
            if not check(case.args, answer, output):
                failures.append(case.id)
    out.update(cases=cases, failures=failures, digest=digest.hexdigest(),
               seconds=round(time.perf_counter() - started, 3))  # fmt: skip
    return out


if __name__ == "__main__":
    suite = load_enamel()
    for task_id in sys.argv[1:]:
        print(json.dumps(check_task(suite.get(task_id))), flush=True)
