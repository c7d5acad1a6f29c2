"""`RewardRecords`: perfgym's own per-completion reward log (JSONL), appended batch by batch as
rewards are made, read back by `perfgym.train.diagnostics` and `perfgym report`."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from perfgym import __version__
from perfgym.train.diagnostics import RECORDS_KEY, speedup_noise


class RewardRecords:
    """Appends one line per completion: step, group (the prompt's task), reward, stage, speedup
    and its noise. A file that exists is continued (a resumed run keeps its earlier steps)."""

    def __init__(self, path: str | Path, **config: Any) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self.step = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self.path.exists() or self.path.stat().st_size == 0:
            header = {RECORDS_KEY: {"perfgym": __version__, "created": time.time(), **config}}
            self.path.write_text(json.dumps(header, default=str) + "\n")
        else:
            self.step = self._last_step() + 1

    def _last_step(self) -> int:
        last = -1
        for line in self.path.read_text(encoding="utf-8").splitlines()[1:]:
            try:
                last = max(last, int(json.loads(line).get("step", -1)))
            except (json.JSONDecodeError, ValueError, AttributeError):
                continue  # a torn last line from a killed run
        return last

    def append(self, rows: Sequence[dict[str, Any]]) -> int:
        """Write one batch as the next step; returns that step."""
        with self._lock:
            step = self.step
            self.step += 1
            with self.path.open("a", encoding="utf-8") as f:
                for row in rows:
                    f.write(json.dumps({"step": step, **row}, default=str) + "\n")
        return step


def batch_rows(
    scored: Sequence[Any], verdicts: Sequence[Any], judged: tuple[float, float] | None
) -> list[dict[str, Any]]:
    """One record per completion of a batch (`Scored`s and their verdicts, one per completion,
    or none): its group (task), reward, stage, speedup and its noise, the verdict's and its
    timing's flags and the reward's reason (why a correct program was paid the floor), and
    when the batch was judged (`judged_from`, `judged_to`: wall clock), which shows whether
    scoring overlapped generation."""
    both = verdicts if len(verdicts) == len(scored) else [None] * len(scored)
    rows = []
    for one, v in zip(scored, both, strict=True):
        noise, flags = None, None
        if v is not None and v.candidate is not None and v.baseline is not None:
            noise = speedup_noise(v.candidate.model_dump(), v.baseline.model_dump())
        if v is not None:
            flags = sorted({*v.flags, *(v.candidate.flags if v.candidate is not None else [])})
        rows.append({"group": one.task_id, "reward": one.value, "stage": one.stage,
                     "speedup": one.speedup, "speedup_noise": noise, "flags": flags,
                     "reason": one.reason,
                     "infra_error": one.infra_error,
                     "judged_from": judged[0] if judged else None,
                     "judged_to": judged[1] if judged else None})  # fmt: skip
    return rows
