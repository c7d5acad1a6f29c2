"""The audit's results file: a header line (what was asked, on which machine, by which perfgym
and judge configuration) and one `TaskAudit` per line, written as each task finishes; a rerun
of the same audit reuses those whose task content is unchanged (`perfgym.store.rows_file`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from perfgym.audit.results import Outcome, TaskAudit
from perfgym.store.rows_file import RowFormat, RowsFile


def _finished(audit: TaskAudit) -> bool:
    """No probe that perfgym could not run (such a task is audited again)."""
    return audit.error is None and not any(r.outcome is Outcome.INFRA_ERROR for r in audit.results)


AUDIT_ROWS: RowFormat[TaskAudit] = RowFormat(
    noun="audit", header_key="audit", parse=TaskAudit.model_validate_json,
    dump=lambda a: a.model_dump_json(), task_id=lambda a: a.task_id,
    task_key=lambda a: a.task_key, finished=_finished,
    restart="use --no-resume to start over, or another -o",
)  # fmt: skip


def reusable(audit: TaskAudit, keys: Mapping[str, str] | None) -> bool:
    """Whether a finished task's result stands for the task audited now: the same content
    (`keys`: task id -> `perfgym.audit.content.content_key`; None: not checked) and no probe that
    perfgym could not run (that task is audited again)."""
    return AUDIT_ROWS.reusable(audit, keys)


class AuditFile(RowsFile[TaskAudit]):
    """Open `path` for an audit described by `header`; `done` holds the tasks a previous run of
    the same audit finished (`resume`) on the same task content (`keys`, see `reusable`), which
    are not audited again; the others are dropped from the file."""

    def __init__(self, path: Path, header: dict[str, Any], *, resume: bool,
                 keys: Mapping[str, str] | None = None) -> None:  # fmt: skip
        super().__init__(path, header, AUDIT_ROWS, resume=resume, keys=keys)
