"""ENAMEL (efficiency benchmark on HumanEval): the shipped data as a perfgym `Suite`.

Source: the public repository q-rz/enamel (`dataset/enamel.csv`, `samples/`), Apache-2.0; the
copy and its licence are in `perfgym/data/enamel/`. Facts reproduced from ENAMEL's code
(`enam/evaluate.py`, `demo.py`): 4 size levels with 8, 4, 4, 4 generated tests, seed
998244353, level weights 0, 3, 3, 4, each test timed 6 times (Hodges-Lehmann estimate),
time limit factor 2 with 0.01 s tolerance, 4 GiB memory, and 142 scored problems.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from perfgym.tasks._data import data_file
from perfgym.tasks._prompt import signature_of
from perfgym.tasks.enamel_constants import ENAMEL_SEED, LEVEL_WEIGHTS, TESTS_PER_LEVEL
from perfgym.tasks.generate import ENAMEL_KEY
from perfgym.tasks.suite_model import Suite
from perfgym.tasks.task import Language, Oracle, Solution, Split, Task, TaskKind, TestCase

REPEATS = 6
TIMEOUT_FACTOR = 2.0
TOLERANCE_S = 0.01
MEMORY_LIMIT_MB = 4096
#: HumanEval ids ENAMEL leaves out of its score (too easy to differentiate efficiency).
EXCLUDED = frozenset(
    {2, 23, 41, 45, 53, 60, 71, 92, 97, 99, 102, 123, 124, 135, 137, 138, 144, 148, 156, 157,
     159, 160}
)  # fmt: skip
N_PROBLEMS = 164
#: Problems whose generators pick from sets of strings: their inputs follow the process's hash
#: seed (in ENAMEL as well), so perfgym generates them with PYTHONHASHSEED=0.
HASH_SEED_DEPENDENT = frozenset({"HumanEval/7", "HumanEval/64", "HumanEval/80"})


def enamel_case_seed(problem: int, level: int, index: int) -> int:
    """The `random.seed` value ENAMEL uses for test `index` of `level` of problem `problem`.

    ENAMEL numbers a problem's tests consecutively across levels (0..19) and seeds each with
    998244353 XOR problem index XOR that number.
    """
    if not 0 <= index < TESTS_PER_LEVEL[level]:
        raise ValueError(f"level {level} has {TESTS_PER_LEVEL[level]} tests, not index {index}")
    return ENAMEL_SEED ^ problem ^ (sum(TESTS_PER_LEVEL[:level]) + index)


def enamel_checker_source(prompt: str, checker: str) -> str:
    """ENAMEL's checker wrapped as a perfgym `check(test_input, expected, output)`.

    ENAMEL runs `<prompt>\\n    pass\\n<checker>` so that helpers the prompt defines (e.g.
    `poly` for HumanEval/32) are visible to `__check(input, answer, output)`; the wrapper keeps
    that and renames the entry.
    """
    return (
        f"{prompt}\n    pass\n{checker}\n\n"
        "def check(test_input, expected, output):\n"
        "    return bool(__check(test_input, expected, output))\n"
    )


def load_enamel() -> Suite:
    """All 164 ENAMEL problems; `metadata['enamel']['scored']` marks the 142 that count."""
    rows = _read_rows(data_file("enamel", "enamel.csv"))
    references = _read_samples("enamel-references.json")
    baselines = _read_samples("humaneval-canonical.json")
    plus = _read_samples("humanevalplus-canonical.json")
    tasks = [_task(i, row, baselines[i], references[i], plus[i]) for i, row in enumerate(rows)]
    scored = [task.id for task in tasks if task.metadata[ENAMEL_KEY]["scored"]]
    return Suite(
        name="enamel",
        tasks=tasks,
        source="builtin:enamel",
        metadata={
            "benchmark": "ENAMEL",
            "upstream": "https://github.com/q-rz/enamel",
            "license": "Apache-2.0",
            "scored": scored,
            "seed": ENAMEL_SEED,
            "tests_per_level": list(TESTS_PER_LEVEL),
            "level_weights": list(LEVEL_WEIGHTS),
            "repeats": REPEATS,
            "estimator": "hodges-lehmann",
            "timeout_factor": TIMEOUT_FACTOR,
            "tolerance_s": TOLERANCE_S,
            "memory_limit_mb": MEMORY_LIMIT_MB,
        },
    )


def _read_rows(path: Path) -> list[dict[str, str]]:
    # Reference solutions and generators are long multi-line fields.
    csv.field_size_limit(1 << 26)
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    if len(rows) != N_PROBLEMS:
        raise ValueError(f"{path}: expected {N_PROBLEMS} problems, found {len(rows)}")
    return rows


def _read_samples(name: str) -> list[str]:
    path = data_file("enamel", "samples", name)
    samples = json.loads(path.read_text(encoding="utf-8"))
    if len(samples) != N_PROBLEMS or any(len(sample) != 1 for sample in samples):
        raise ValueError(f"{path}: expected {N_PROBLEMS} one-element lists")
    return [sample[0] for sample in samples]


def _task(i: int, row: dict[str, str], baseline: str, reference: str, plus: str) -> Task:
    task_id = row["task_id"]
    if task_id != f"HumanEval/{i}":
        raise ValueError(f"enamel.csv row {i} holds {task_id!r}, expected HumanEval/{i}")
    levels = [int(size) for size in row["input_levels"].split()]
    if len(levels) != len(TESTS_PER_LEVEL):
        raise ValueError(f"{task_id}: expected {len(TESTS_PER_LEVEL)} input levels: {levels}")
    cases = [
        TestCase(
            id=f"L{level}-{index}",
            size=size,
            seed=enamel_case_seed(i, level, index),
            level=level,
            index=index,
        )
        for level, size in enumerate(levels)
        for index in range(TESTS_PER_LEVEL[level])
    ]
    prompt = row["prompt"]
    block: dict[str, Any] = {
        "index": i,
        "scored": i not in EXCLUDED,
        "hash_seed_sensitive": task_id in HASH_SEED_DEPENDENT,
        "levels": levels,
        "prompt": prompt,
        "input_generator": row["input_generator"],
        "checker": row["checker"],
        "reference_body": row["reference_solution"],
    }
    return Task(
        id=task_id,
        family=task_id,
        language=Language.PYTHON,
        kind=TaskKind.FUNCTION,
        title=row["entry_point"],
        goal=prompt,
        interface=signature_of(prompt, row["entry_point"]),
        metric="ENAMEL efficiency: per-level time against the expert reference, weights 0,3,3,4",
        correctness_rule="On every generated test, ENAMEL's checker accepts the output against "
        "the expert reference's output.",
        baseline=Solution(label="baseline", source=baseline),
        references=[Solution(label="reference", source=reference)],
        pool=[Solution(label="humanevalplus-canonical", source=plus)],
        # Level 0 decides correctness only (weight 0); levels 1-3 are the timed workloads.
        tests=[case for case in cases if case.level == 0],
        workloads=[case for case in cases if case.level != 0],
        oracle=Oracle(kind="checker", checker=enamel_checker_source(prompt, row["checker"])),
        entry_point=row["entry_point"],
        split=Split.TEST,
        memory_limit_mb=MEMORY_LIMIT_MB,
        metadata={ENAMEL_KEY: block},
    )
