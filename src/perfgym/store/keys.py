"""Content keys: what a stored verdict is the answer to (task, candidate text, judge config)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from perfgym.judge.config import JudgeConfig
from perfgym.tasks.content_hash import content_hash
from perfgym.tasks.task import Task

#: Bumped when the key recipe, or what a stored verdict measured, changes, so keys of different
#: recipes never collide. 2: Python runs skip the host's site-packages start-up hooks
#: (perfgym.sandbox.site_hooks), so their timings leave out that start-up cost.
KEY_VERSION = 2

#: Judge settings that change how fast a batch runs but not what any verdict says.
_NOT_IN_KEY = frozenset({"concurrency", "cores", "build_cache"})


def _digest(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    # surrogatepass: a lone surrogate (from a JSON escape) is hashed, not a crash; valid text
    # encodes exactly as plain UTF-8, so no existing key changes.
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def task_digest(task: Task) -> str:
    """Hash of everything a task says. `root` (where it was loaded from) is left out: the same
    task read from another checkout is the same task (computed once per task object)."""
    return content_hash(task)


def config_digest(config: JudgeConfig) -> str:
    """Hash of the judge settings that can change a verdict. Hidden workloads off leave the
    key as it was before they existed; on, a fixed secret seed enters as its hash (the inputs
    it draws are what the verdict was decided on; a fresh seed per call has none to enter)."""
    doc = config.model_dump(mode="json", exclude=set(_NOT_IN_KEY))
    if not config.hidden_workloads:
        doc.pop("hidden_workloads", None)
    elif config.hidden_seed is not None:
        doc["hidden_seed_sha256"] = hashlib.sha256(str(config.hidden_seed).encode()).hexdigest()
    return _digest(doc)


def verdict_key(
    task: Task | str, config: JudgeConfig | str, *, completion: str | None, source: str | None
) -> str:
    """The store key of one judged candidate.

    `task` and `config` may be given as their digests (computed once for a batch). Raw model
    text (`completion`) and a ready `source` are different inputs even when equal: the first
    goes through extraction.
    """
    if (completion is None) == (source is None):
        raise ValueError("a candidate has exactly one of completion or source")
    return _digest(
        {
            "v": KEY_VERSION,
            "task": task if isinstance(task, str) else task_digest(task),
            "judge": config if isinstance(config, str) else config_digest(config),
            "completion": completion,
            "source": source,
        }
    )
