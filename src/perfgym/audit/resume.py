"""The audit's results file: a header line (what was asked, on which machine, by which perfgym
and judge configuration) and one `TaskAudit` per line, written as each task finishes; a rerun
of the same audit reuses those whose task content is unchanged."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from perfgym.audit.results import Outcome, TaskAudit
from perfgym.errors import ConfigError


def reusable(audit: TaskAudit, keys: Mapping[str, str] | None) -> bool:
    """Whether a finished task's result stands for the task audited now: the same content
    (`keys`: task id -> `perfgym.audit.content.content_key`; None: not checked) and no probe that
    perfgym could not run (that task is audited again)."""
    if audit.error is not None or any(r.outcome is Outcome.INFRA_ERROR for r in audit.results):
        return False
    return keys is None or keys.get(audit.task_id) == audit.task_key


class AuditFile:
    """Open `path` for an audit described by `header`; `done` holds the tasks a previous run of
    the same audit finished (`resume`) on the same task content (`keys`, see `reusable`), which
    are not audited again; the others are dropped from the file."""

    def __init__(self, path: Path, header: dict[str, Any], *, resume: bool,
                 keys: Mapping[str, str] | None = None) -> None:  # fmt: skip
        self.path = path
        self.header = header
        self.done: dict[str, TaskAudit] = {}
        if resume and path.exists() and path.stat().st_size:
            self.done = {k: a for k, a in _read(path, header).items() if reusable(a, keys)}
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] = path.open("w", encoding="utf-8")
        self._file.write(json.dumps({"audit": header}, sort_keys=True) + "\n")
        for audit in self.done.values():
            self._file.write(audit.model_dump_json() + "\n")
        self._file.flush()

    def add(self, audit: TaskAudit) -> None:
        self._file.write(audit.model_dump_json() + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def _read(path: Path, header: dict[str, Any]) -> dict[str, TaskAudit]:
    """The file's finished tasks, read as bytes: a line that is not whole UTF-8 JSON of a
    `TaskAudit` (an interrupt cut it, even inside a character) is skipped."""
    lines = path.read_bytes().split(b"\n")
    try:
        first = json.loads(lines[0].decode("utf-8"))["audit"]
    except (ValueError, KeyError, TypeError, IndexError):
        raise ConfigError(f"{path} is not an audit results file (use another -o)") from None
    if first != header:
        diff = sorted(k for k in set(first) | set(header) if first.get(k) != header.get(k))
        raise ConfigError(f"{path} holds another audit (differs in {', '.join(diff)}): "
                          "use --no-resume to start over, or another -o")  # fmt: skip
    done: dict[str, TaskAudit] = {}
    for line in lines[1:]:
        try:
            audit = TaskAudit.model_validate_json(line.decode("utf-8"))
        except (UnicodeDecodeError, ValidationError):
            continue  # a line cut short by the interrupt: that task is audited again
        done[audit.task_id] = audit
    return done
