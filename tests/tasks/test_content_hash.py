"""A task's content hash is computed once per task object and never outlives it."""

from __future__ import annotations

import gc
import json

from perfgym.judge.plan import task_key
from perfgym.store.keys import task_digest
from perfgym.tasks import content_hash as ch
from perfgym.tasks import load_suite
from perfgym.tasks.task import TestCase


def _fresh(task) -> str:  # type: ignore[no-untyped-def]
    import hashlib

    return hashlib.sha256(ch._content(task)).hexdigest()


def test_the_kept_hash_is_the_hash_of_the_content() -> None:
    task = load_suite("perfgym-core").tasks[0]
    assert ch.content_hash(task) == _fresh(task)
    assert ch.content_hash(task) == _fresh(task)  # the kept one, equal
    assert task_digest(task) == _fresh(task)  # the store's key is unchanged by the memo


def test_a_copy_with_other_content_has_its_own_hash_and_key() -> None:
    task = load_suite("perfgym-core").tasks[0]
    other = task.model_copy(update={"tests": task.tests[:1]})
    assert ch.content_hash(other) != ch.content_hash(task)
    assert task_key(other) != task_key(task)
    moved = task.model_copy(update={"root": None})
    assert ch.content_hash(moved) == ch.content_hash(task)  # root is not content
    assert task_key(moved) != task_key(task)  # but the judge keeps tasks of two roots apart


def test_an_entry_goes_with_its_task() -> None:
    task = load_suite("perfgym-core").tasks[0].model_copy(deep=True)
    ch.content_hash(task)
    key = id(task)
    assert key in ch._kept
    del task
    gc.collect()
    assert key not in ch._kept


def _with_args(task, *args):  # type: ignore[no-untyped-def]
    return task.model_copy(update={"tests": [TestCase(id="t0", args=list(args))]})


def test_values_json_would_merge_have_their_own_hashes() -> None:
    """JSON wrote None for a NaN and a list for a tuple: two tasks differing only there
    shared a key, and one's stored verdict answered for the other."""
    task = load_suite("perfgym-core").tasks[0]
    pairs = [((float("nan"),), (None,)), (((1, 2),), ([1, 2],)), ((1,), (1.0,)), ((1,), (True,)),
             ((0.0,), (-0.0,)), (({1, 2},), ([1, 2],))]  # fmt: skip
    for a, b in pairs:
        assert ch.content_hash(_with_args(task, *a)) != ch.content_hash(_with_args(task, *b)), (a, b)
    assert ch.content_hash(_with_args(task, (1, 2))) == ch.content_hash(_with_args(task, (1, 2)))


def test_a_value_pickle_cannot_hold_is_hashed_by_its_repr() -> None:
    task = load_suite("perfgym-core").tasks[0]
    odd = _with_args(task, lambda: 0)
    assert ch._content(odd).startswith(b"repr:")
    assert ch.content_hash(odd) != ch.content_hash(_with_args(task, 0))


def test_the_shipped_suites_hash_alike_in_another_process() -> None:
    """A resumed run and a store reuse verdicts by these keys: another interpreter (another
    string-hash seed) computes the same ones."""
    code = ("import json,sys\nfrom perfgym.tasks import load_suite\n"
            "from perfgym.tasks.content_hash import content_hash\n"
            "print(json.dumps({n: [content_hash(t) for t in load_suite(n).tasks]"
            " for n in ('perfgym-core', 'humanevalplus')}))\n")  # fmt: skip
    import os
    import subprocess
    import sys

    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env={**os.environ, "PYTHONHASHSEED": seed}).stdout
            for seed in ("1", "2")]  # fmt: skip
    assert runs[0] == runs[1]
    here = json.loads(runs[0])
    assert here["perfgym-core"] == [ch.content_hash(t) for t in load_suite("perfgym-core").tasks]
