"""What an audited task's result stands for: `content_key`, the task's content as audited,
and `config_digest`, the judge configuration, compared when a rerun would reuse a result."""

from __future__ import annotations

import hashlib
import json
import os
import time

from perfgym.judge import JudgeConfig
from perfgym.judge.plan import task_key
from perfgym.tasks.task import Task, TaskKind

#: Files larger than this enter a harness task's key by size and modification time only.
_HASHED_BYTES = 16 << 20


def content_key(task: Task) -> str:
    """`perfgym.judge.plan.task_key` (the id and a hash of everything the task says), and for
    a harness task the files of its directory, which its build copies and runs (a harness
    loosened on disk is another task). A directory that cannot be read gives a key no other
    run shares: nothing is reused for it."""
    key = task_key(task)
    if task.kind is not TaskKind.HARNESS or task.root is None or not task.root.is_dir():
        return key
    digest = hashlib.sha256(key.encode())
    try:
        for path in _files(str(task.root)):
            size = os.stat(path).st_size
            digest.update(os.path.relpath(path, task.root).encode("utf-8", "surrogateescape"))
            if size > _HASHED_BYTES:
                digest.update(f"\0{size}:{os.stat(path).st_mtime_ns}\0".encode())
            else:
                with open(path, "rb") as f:
                    digest.update(b"\0" + hashlib.sha256(f.read()).digest())
    except OSError:
        return f"{key}#unreadable-{time.time_ns()}"
    return f"{task.id}@{digest.hexdigest()[:32]}"


def _files(root: str) -> list[str]:
    """Every regular file under `root` (symbolic links not followed), in a fixed order."""
    out = []
    for folder, dirs, names in os.walk(root, followlinks=False, onerror=_raise):
        dirs.sort()
        out += [os.path.join(folder, n) for n in sorted(names)
                if os.path.isfile(os.path.join(folder, n))
                and not os.path.islink(os.path.join(folder, n))]  # fmt: skip
    return out


def _raise(exc: OSError) -> None:
    raise exc


def config_digest(config: JudgeConfig) -> str:
    """A short digest of a judge configuration (in an audit's header: results judged under
    another configuration are not reused)."""
    text = json.dumps(config.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
