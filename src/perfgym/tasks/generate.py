"""Concrete inputs for generated test cases: native `generate(size, seed)` and ENAMEL's generators.

A test case or workload may be given by a size and a seed instead of literal input. The judge
calls `materialize(task, case)` before running such a case; it returns a copy with `stdin`
(STDIO tasks) or `args` (FUNCTION tasks) filled in and leaves literal cases as they are.

Generators are suite data that perfgym ships or the user supplied, run in this process (as
ENAMEL and EvalPlus run theirs); candidate code never runs here.
"""

from __future__ import annotations

import builtins
import os
import pickle
import random
import string
import subprocess
import sys
import time
from collections.abc import Iterable
from typing import Any

from perfgym.errors import TaskFormatError
from perfgym.tasks import enamel_random
from perfgym.tasks.task import Task, TaskKind, TestCase

#: Key of the ENAMEL block in `Task.metadata` (see `perfgym.tasks.enamel`).
ENAMEL_KEY = "enamel"
_PINNED_TIMEOUT_S = 600


def needs_input(task: Task, case: TestCase) -> bool:
    """True when `case` is given by size and seed and has no literal input yet."""
    if case.size is None or case.seed is None:
        return False
    if task.kind is TaskKind.FUNCTION:
        return case.args is None
    return case.stdin == ""


def materialize(task: Task, case: TestCase) -> TestCase:
    """`case` with its input generated (a copy), or `case` itself when it is literal."""
    if not needs_input(task, case):
        return case
    if ENAMEL_KEY in task.metadata:
        return materialize_all(task, [case])[0]
    assert case.size is not None and case.seed is not None
    if task.generator is None:
        raise TaskFormatError(
            f"task {task.id!r}: case {case.id!r} is given by size/seed but the task has no "
            "generator"
        )
    value = _native_generate(task, case.size, case.seed)
    if task.kind is TaskKind.FUNCTION:
        if not isinstance(value, list | tuple):
            raise TaskFormatError(
                f"task {task.id!r}: generate() must return an argument list for a function "
                f"task, got {type(value).__name__}"
            )
        return case.model_copy(update={"args": list(value)})
    if not isinstance(value, str):
        raise TaskFormatError(
            f"task {task.id!r}: generate() must return stdin text, got {type(value).__name__}"
        )
    return case.model_copy(update={"stdin": value})


def materialize_all(task: Task, cases: Iterable[TestCase]) -> list[TestCase]:
    """`materialize` over several cases, in order (one generator process for all, if any)."""
    cases = list(cases)
    if ENAMEL_KEY not in task.metadata:
        return [materialize(task, case) for case in cases]
    todo = [case for case in cases if needs_input(task, case)]
    specs = [_enamel_spec(task, case) for case in todo]
    block = task.metadata[ENAMEL_KEY]
    if block.get("hash_seed_sensitive") and sys.flags.hash_randomization:
        values = _enamel_in_pinned_process(block["prompt"], block["input_generator"], specs)
    else:
        values = [
            run_enamel_generator(block["prompt"], block["input_generator"], *spec) for spec in specs
        ]
    generated = dict(zip((case.id for case in todo), values, strict=True))
    return [
        case.model_copy(update={"args": generated[case.id]}) if case.id in generated else case
        for case in cases
    ]


def enamel_inputs(task: Task, level: int) -> list[TestCase]:
    """The generated test cases of one ENAMEL level (0 to 3), inputs filled in."""
    block = task.metadata.get(ENAMEL_KEY)
    if block is None:
        raise TaskFormatError(f"task {task.id!r} is not an ENAMEL task")
    n_levels = len(block["levels"])
    if not 0 <= level < n_levels:
        raise ValueError(f"ENAMEL level must be in 0..{n_levels - 1}, got {level}")
    cases = [case for case in [*task.tests, *task.workloads] if case.level == level]
    return materialize_all(task, cases)


def _native_generate(task: Task, size: int, seed: int) -> Any:
    namespace: dict[str, Any] = {"__builtins__": builtins, "__name__": f"perfgym_gen_{task.id}"}
    assert task.generator is not None
    try:
        exec(compile(task.generator, f"<generator of {task.id}>", "exec"), namespace)
    except Exception as exc:
        raise TaskFormatError(f"task {task.id!r}: generator does not load: {exc!r}") from exc
    generate = namespace.get("generate")
    if not callable(generate):
        raise TaskFormatError(f"task {task.id!r}: generator defines no generate(size, seed)")
    return generate(size, seed)


def _enamel_spec(task: Task, case: TestCase) -> tuple[int, int, int, int]:
    if case.size is None or case.seed is None or case.level is None or case.index is None:
        raise TaskFormatError(
            f"task {task.id!r}: ENAMEL case {case.id!r} needs size, seed, level and index"
        )
    return case.size, case.seed, case.level, case.index


def run_enamel_generator(
    prompt: str, generator: str, size: int, seed: int, level: int, index: int
) -> list[Any]:
    """Run ENAMEL's generator for one case exactly as ENAMEL's evaluator does.

    ENAMEL executes `<prompt>\\n<input_generator>\\nrandom.seed(S)` and then
    `generate_input(size=..., lid=level, cid=index)` in a namespace holding `random`, `string`,
    `time` and its helpers, with S = 998244353 ^ problem_index ^ (number of cases in earlier
    levels + index); the loader stores S as the case's seed. The global `random` state is saved
    and restored, so generating inputs does not disturb anyone else's random stream.
    """
    namespace: dict[str, Any] = {
        "__builtins__": builtins,
        "__name__": "__enamel_generator__",
        "random": random,
        "string": string,
        "time": time,
        "rand_parens": enamel_random.rand_parens,
        "miller_rabin": enamel_random.miller_rabin,
        "rand_probably_prime": enamel_random.rand_probably_prime,
        "rand_primality": enamel_random.rand_primality,
    }
    exec(compile(prompt + "\n" + generator + "\n", "<ENAMEL generator>", "exec"), namespace)
    saved = random.getstate()
    try:
        random.seed(seed)
        value = namespace["generate_input"](size=size, lid=level, cid=index)
    finally:
        random.setstate(saved)
    # ENAMEL calls the solution as f(*value): the generator's result is the argument tuple.
    return list(value)


def _enamel_in_pinned_process(
    prompt: str, generator: str, specs: list[tuple[int, int, int, int]]
) -> list[list[Any]]:
    """Generate in a child process whose string hashing is fixed (PYTHONHASHSEED=0).

    A few ENAMEL generators pick from sets of strings, whose iteration order follows the
    per-process hash seed: their inputs differ from run to run, in ENAMEL too. Pinning the
    seed makes them reproducible.
    """
    if not specs:
        return []
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    payload = pickle.dumps({"prompt": prompt, "generator": generator, "specs": specs})
    proc = subprocess.run(
        [sys.executable, "-m", "perfgym.tasks._pinned_generate"],
        input=payload,
        capture_output=True,
        env=env,
        timeout=_PINNED_TIMEOUT_S,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(
            "ENAMEL input generation failed in the pinned-hash process: "
            + proc.stderr.decode(errors="replace")[-2000:]
        )
    values: list[list[Any]] = pickle.loads(proc.stdout)
    return values
