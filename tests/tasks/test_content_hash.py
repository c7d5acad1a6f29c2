"""A task's content hash is computed once per task object and never outlives it."""

from __future__ import annotations

import gc
import json

from perfgym.judge.plan import task_key
from perfgym.store.keys import task_digest
from perfgym.tasks import content_hash as ch
from perfgym.tasks import load_suite


def _fresh(task) -> str:  # type: ignore[no-untyped-def]
    import hashlib

    text = json.dumps(task.model_dump(mode="json", exclude={"root"}), sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False, default=str)  # fmt: skip
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


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
