"""A task's content hash, computed once per task object: the JSON of everything it says.

A HumanEval+ task holds ~1,000 tests; dumping it to JSON takes milliseconds, and a run of 164
tasks asked for it three times a task (the judge's grouping, the checkpoint's keys, the
reference cache's key) before any test ran. Tasks are not changed after they are made (every
change is a `model_copy`, a new object), so the hash of one object is computed once and kept
while that object lives.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
import weakref

from perfgym.tasks.task import Task

_lock = threading.Lock()
#: id(task) -> (a weak reference to it, its hash without `root`). The weak reference drops the
#: entry when the task goes, so an id reused by a new object never finds an old hash.
_kept: dict[int, tuple[weakref.ref[Task], str]] = {}


def content_hash(task: Task) -> str:
    """SHA-256 of the task's JSON, `root` (where it was loaded from) left out: the same task
    read from another checkout has the same hash."""
    key = id(task)
    with _lock:
        kept = _kept.get(key)
    if kept is not None and kept[0]() is task:
        return kept[1]
    text = json.dumps(task.model_dump(mode="json", exclude={"root"}), sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False, default=str)  # fmt: skip
    # surrogatepass: a lone surrogate (from a JSON escape) is hashed, not a crash
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    ref = weakref.ref(task, functools.partial(_forget, key))
    with _lock:
        _kept[key] = (ref, digest)
    return digest


def _forget(key: int, ref: weakref.ref[Task]) -> None:
    with _lock:
        kept = _kept.get(key)
        if kept is not None and kept[0] is ref:
            del _kept[key]
