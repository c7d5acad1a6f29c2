"""`perfgym validate --out FILE.jsonl`: its rows file (`perfgym.store.rows_file`, as `perfgym
audit` keeps its results): a header naming the suite, the judge configuration, the machine and
perfgym's version, then one `TaskValidation` per task, written as each finishes; `--resume`
reuses the rows of the same header on unchanged task content."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from perfgym.judge.validate import TaskValidation
from perfgym.store.rows_file import RowFormat

if TYPE_CHECKING:
    from perfgym.judge import JudgeConfig
    from perfgym.judge.validate_rerun import RerunPolicy


def _parse(line: str) -> TaskValidation:
    data = json.loads(line)
    if not isinstance(data, dict):
        raise ValueError("not a row")
    data.pop("ok", None)  # written for readers of the file; derived from the row
    return TaskValidation.model_validate(data)


def _finished(row: TaskValidation) -> bool:
    """Not a row perfgym failed to produce: an infrastructure failure or a task that could not
    be judged is validated again."""
    if any(c.infra_error and c.detail != "NEEDS_GPU" for c in row.solutions):
        return False
    return not any(p.startswith("could not be judged") for p in row.problems)


def dump_row(row: TaskValidation) -> str:
    """A row as written: the model and whether the task is ok."""
    return json.dumps(row.model_dump(mode="json") | {"ok": row.ok})


VALIDATION_ROWS: RowFormat[TaskValidation] = RowFormat(
    noun="validation", header_key="validation", parse=_parse, dump=dump_row,
    task_id=lambda r: r.task_id, task_key=lambda r: r.task_key, finished=_finished,
    restart="use --no-resume to start over, or another --out",
)  # fmt: skip


def validation_header(suite: str, config: JudgeConfig, min_speedup: float,
                      time_limit_s: float | None,
                      rerun: RerunPolicy | None = None) -> dict[str, Any]:  # fmt: skip
    """What a reused row must have been validated under (the backend is not in it: local and
    Ray judge alike); a row of a rerun policy is reused under that policy only."""
    from perfgym import __version__
    from perfgym.audit.content import config_digest
    from perfgym.machine import fingerprint

    return {"suite": suite, "repeats": config.repeats, "min_speedup": min_speedup,
            "time_limit_s": time_limit_s, "machine": fingerprint(), "perfgym": __version__,
            "judge": config_digest(config),
            "rerun": rerun.model_dump(mode="json") if rerun is not None else None}  # fmt: skip
