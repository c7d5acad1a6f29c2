"""The audit's results file: a header line (what was asked, on which machine) and one
`TaskAudit` per line, written as each task finishes; a rerun of the same audit reuses them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from perfgym.audit.results import TaskAudit
from perfgym.errors import ConfigError


class AuditFile:
    """Open `path` for an audit described by `header`; `done` holds the tasks a previous run of
    the same audit finished (`resume`), which are not audited again."""

    def __init__(self, path: Path, header: dict[str, Any], *, resume: bool) -> None:
        self.path = path
        self.header = header
        self.done: dict[str, TaskAudit] = {}
        if resume and path.exists() and path.stat().st_size:
            self.done = _read(path, header)
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
    lines = path.read_text(encoding="utf-8").splitlines()
    try:
        first = json.loads(lines[0])["audit"]
    except (ValueError, KeyError, TypeError, IndexError):
        raise ConfigError(f"{path} is not an audit results file (use another -o)") from None
    if first != header:
        diff = sorted(k for k in set(first) | set(header) if first.get(k) != header.get(k))
        raise ConfigError(f"{path} holds another audit (differs in {', '.join(diff)}): "
                          "use --no-resume to start over, or another -o")  # fmt: skip
    done: dict[str, TaskAudit] = {}
    for line in lines[1:]:
        try:
            audit = TaskAudit.model_validate_json(line)
        except ValidationError:
            continue  # a line cut short by the interrupt: that task is audited again
        done[audit.task_id] = audit
    return done
