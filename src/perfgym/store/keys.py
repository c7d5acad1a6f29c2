"""Content keys: what a stored verdict is the answer to (task, candidate text, judge config)."""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any

from perfgym.judge.config import JudgeConfig
from perfgym.judge.reference_context import code_digest
from perfgym.tasks.content_hash import content_hash
from perfgym.tasks.task import Task

#: Bumped when the key recipe, or what a stored verdict measured, changes, so keys of different
#: recipes never collide. 2: Python runs skip the host's site-packages start-up hooks
#: (perfgym.sandbox.site_hooks), so their timings leave out that start-up cost. 3: the judge's
#: part holds perfgym's own code and the Python it runs on.
KEY_VERSION = 3

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
    """Hash of the judge that gives a verdict: the settings that can change one, perfgym's
    own code and the Python it runs on (a verdict stored by another perfgym never answers for
    this one: red team helper-94 had a store written before a judge fix, whose verdict the fix
    withdraws, answer OK at RLPF 1.26 through reuse and replay). Hidden workloads off leave
    the settings as they were before they existed; on, a fixed secret seed enters as its hash
    (the inputs it draws are what the verdict was decided on; a fresh seed per call has none
    to enter)."""
    doc = config.model_dump(mode="json", exclude=set(_NOT_IN_KEY))
    doc["perfgym_code"] = code_digest()
    doc["python"] = sys.version
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
