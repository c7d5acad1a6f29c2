"""`CandidatesOut`: the candidates JSONL `perfgym generate` writes, line by line, resumable.

Opening an existing file keeps its complete lines (a line torn by a kill is cut off) and says
which (task, model, sample) are done; each new line is appended and flushed as it is produced;
`finish` rewrites the file in task order, then sample order (atomically), so an interrupted and
resumed run ends with the same file as an uninterrupted one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

Identity = tuple[str, str, int]


class CandidatesOut:
    """An append-only candidates file with the identities of its lines."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines: list[dict[str, Any]] = []
        self.kept = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            self._load()
        self._fh = path.open("a", encoding="utf-8")

    @property
    def done(self) -> set[Identity]:
        return {_identity(obj) for obj in self.lines}

    def _load(self) -> None:
        data = self.path.read_bytes()
        good = 0  # bytes of complete, parseable lines at the start of the file
        for raw in data.splitlines(keepends=True):
            if not raw.endswith(b"\n"):
                break  # torn by a kill: written again
            try:
                obj = json.loads(raw)
                _identity(obj)
            except (ValueError, KeyError, TypeError):
                break
            self.lines.append(obj)
            good += len(raw)
        if good != len(data):
            with self.path.open("r+b") as fh:
                fh.truncate(good)
        self.kept = len(self.lines)

    def write(self, obj: dict[str, Any]) -> None:
        """Append one line and flush it (a kill after this keeps it)."""
        self._fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self._fh.flush()
        self.lines.append(obj)

    def finish(self, task_order: list[str]) -> None:
        """Rewrite the file sorted by task order, then model, then sample (atomic replace)."""
        self._fh.close()
        rank = {t: i for i, t in enumerate(task_order)}
        lines = sorted(self.lines, key=lambda o: (rank.get(o["task_id"], len(rank)),
                                                  o["task_id"], o["model"], o["sample"]))  # fmt: skip
        tmp = self.path.with_name(self.path.name + ".tmp")
        with tmp.open("w", encoding="utf-8") as fh:
            for obj in lines:
                fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()


def _identity(obj: Any) -> Identity:
    task_id, model, sample = obj["task_id"], obj["model"], obj["sample"]
    if not isinstance(task_id, str) or not isinstance(model, str) or not isinstance(sample, int):
        raise TypeError("not a candidates line")
    return task_id, model, sample
