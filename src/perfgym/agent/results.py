"""`perfgym agent`'s results JSONL: a header, each attempt as it is evaluated, each task's end."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from perfgym.agent.attempt import Attempt
from perfgym.agent.controller import AgentResult


class AgentResultsFile:
    """Appends one JSON line per record and flushes it at once (a crash keeps what was done)."""

    def __init__(self, path: Path, header: dict[str, Any]) -> None:
        self.path = path
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._write({"kind": "header", **header})

    def _write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, default=str, ensure_ascii=False)
        with self._lock, self.path.open("a", encoding="utf-8") as f:
            f.write(line + "\n")
            f.flush()

    def attempt(self, attempt: Attempt) -> None:
        self._write({"kind": "attempt", **attempt.model_dump(mode="json")})

    def task(self, result: AgentResult) -> None:
        self._write({"kind": "task", **result.model_dump(mode="json", exclude={"attempts"})})

    def error(self, task_id: str, message: str) -> None:
        self._write({"kind": "error", "task_id": task_id, "error": message})
