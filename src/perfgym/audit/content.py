"""What an audited task's result stands for: `content_key`, the task's content as audited,
and `config_digest`, the judge configuration, compared when a rerun would reuse a result."""

from __future__ import annotations

import hashlib
import json

from perfgym.judge import JudgeConfig
from perfgym.judge.plan import task_key
from perfgym.tasks.task import Task


def content_key(task: Task) -> str:
    """`perfgym.judge.plan.task_key`: the id and a hash of everything the task says, a harness
    task's folder's files included (`perfgym.tasks.harness_files`: a harness loosened on disk
    is another task)."""
    return task_key(task)


def config_digest(config: JudgeConfig) -> str:
    """A short digest of a judge configuration (in an audit's header: results judged under
    another configuration are not reused)."""
    text = json.dumps(config.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
