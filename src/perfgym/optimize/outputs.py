"""A run's files: the best program per task as a candidates JSONL (`perfgym eval --candidates`
reads it), and the per-iteration curves with the run's summary as JSON (the report draws them)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from perfgym.optimize.curves import IterationRow, speedup_ci
from perfgym.optimize.search import TaskState

#: `kind` of the summary JSON, so `perfgym report` can tell it from other files.
SUMMARY_KIND = "perfgym-optimize"


def best_lines(states: Mapping[str, TaskState], model: str) -> list[dict[str, Any]]:
    """One candidates line per task: its best program (the baseline when nothing beat it)."""
    out = []
    for tid, s in states.items():
        if s.best_source is None:
            continue
        out.append({"task_id": tid, "model": f"{model}+optimize", "sample": 0,
                    "source": s.best_source, "best": s.best_role,
                    "iteration": s.best_iteration})  # fmt: skip
    return out


def task_rows(states: Mapping[str, TaskState]) -> list[dict[str, Any]]:
    """Per task: its best, where it was accepted, why the search stopped (a budget, patience,
    or every iteration done), which suite solutions have its very source, the bests dropped
    (found wrong on a later round's inputs or by the final check), the final check, and its speed-up over the baseline with the 95 %
    CI of its last measurement."""
    rows = []
    for tid, s in states.items():
        v = s.best_verdict
        same = list(v.same_source) if v is not None else []
        if s.best_role == "baseline" and "baseline" not in same:
            same.insert(0, "baseline")
        # the baseline is its own speed-up, 1 exactly (no measurement says otherwise)
        speed = (1.0, None, None) if s.best_role == "baseline" else speedup_ci(v)
        rows.append({"task_id": tid, "best": s.best_role or "none", "iteration": s.best_iteration,
                     "stopped": s.stopped or f"all {s.config.iterations} iteration(s) done",
                     "same_as": same, "reference": "reference" in same,
                     "dropped": list(s.dropped), "final_check": s.final_check,
                     "speedup": speed[0] if speed else None,
                     "ci": list(speed[1:]) if speed and speed[1] is not None else None})  # fmt: skip
    return rows


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def write_outputs(out: Path, states: Mapping[str, TaskState], rows: list[IterationRow],
                  header: dict[str, Any]) -> tuple[Path, Path]:  # fmt: skip
    """(candidates JSONL, summary JSON) under `out`."""
    best = out / "best.jsonl"
    _write(best, "".join(json.dumps(line) + "\n" for line in best_lines(states, header["model"])))
    summary = out / "optimize.json"
    doc = {"kind": SUMMARY_KIND, **header, "iterations": [r.model_dump() for r in rows],
           "tasks": task_rows(states)}  # fmt: skip
    _write(summary, json.dumps(doc, indent=1))  # `kind` first: readers tell it by its head
    return best, summary
