"""Hidden workloads: the inputs a decision is made on, drawn fresh from a task's generator.

A task's declared tests and workloads are *visible*: prompts and feedback may quote them, and
whoever writes a program (a policy, a model, an agent) may have learnt them. With
`JudgeConfig.hidden_workloads` the judge checks and times candidates, baseline and reference on
hidden workloads instead: one per declared generated workload, the same size (and ENAMEL level
and index), a seed derived from a secret seed, the task and the workload (HMAC-SHA256), the
expected output the reference's. The secret never reaches a run's environment, a prompt or a
feedback message; a hidden case's id carries a digest of its derived seed, so every cache keyed
by case id (the reference's outputs, kept timings) keys on the actual input.

A task that cannot be given hidden workloads (no generator, a harness, literal workloads only,
or a generator whose hidden inputs equal visible ones) is judged on its visible workloads, and
its verdict says so (`DecidedOn.VISIBLE` and why): never a silent fallback.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from perfgym.tasks.generate import ENAMEL_KEY
from perfgym.tasks.task import Task, TaskKind, TestCase

#: Every hidden case's id starts so; feedback never quotes such a case's id, input or output.
HIDDEN_PREFIX = "hidden-"
#: Generator seeds of hidden cases lie in [0, SEED_SPACE) (a 31-bit int: any generator's RNG).
SEED_SPACE = 1 << 31


def fresh_seed() -> int:
    """A new secret seed (per optimisation run, per training batch)."""
    return secrets.randbits(63)


def is_hidden(case_id: str) -> bool:
    return case_id.startswith(HIDDEN_PREFIX)


def _derived(secret: int, task: Task, case: TestCase, attempt: int, draw: int) -> bytes:
    msg = f"{task.id}\0{case.id}\0{case.size}\0{case.level}\0{case.index}\0{attempt}"
    msg += f"\0{draw}" if draw else ""  # a workload's first draw: the same as ever
    return hmac.new(secret.to_bytes(8, "big", signed=False), msg.encode(), hashlib.sha256).digest()


def hidden_cases(task: Task, secret: int, per_workload: int = 1) -> tuple[list[TestCase], str]:
    """The hidden counterparts of `task`'s generated workloads, `per_workload` inputs of each
    (not yet materialised), or ([], why there are none)."""
    if task.kind is TaskKind.HARNESS:
        return [], "a harness task runs its own fixed workloads"
    if task.generator is None and ENAMEL_KEY not in task.metadata:
        return [], "the task has no generator"
    sized = [w for w in task.workloads if w.size is not None and w.seed is not None]
    if not sized:
        return [], "the task declares no generated workloads (size and seed)"
    declared = {(w.size, w.level, w.index, w.seed) for w in [*task.tests, *task.workloads]}
    out: list[TestCase] = []
    for draw in range(per_workload):
        for w in sized:
            for attempt in range(8):
                digest = _derived(secret, task, w, attempt, draw)
                seed = int.from_bytes(digest[:8], "big") % SEED_SPACE
                if (w.size, w.level, w.index, seed) not in declared:
                    break
            out.append(TestCase(id=f"{HIDDEN_PREFIX}{len(out) + 1}-{digest[8:14].hex()}",
                                size=w.size, seed=seed, level=w.level, index=w.index))  # fmt: skip
    return out, ""


def same_inputs(hidden: list[TestCase], visible: list[TestCase]) -> bool:
    """Every hidden input equals some visible one (a generator that ignores its seed)."""
    seen = {(c.stdin, repr(c.args)) for c in visible}
    return all((c.stdin, repr(c.args)) in seen for c in hidden)
