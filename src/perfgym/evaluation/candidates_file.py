"""Reading a candidates JSONL file: every broken line named, unknown fields kept as `meta`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perfgym.errors import ConfigError
from perfgym.evaluation.candidates_formats import CandidateRecord, Format, LineError, parse_record
from perfgym.judge.candidate import Candidate
from perfgym.judge.verdict import Verdict
from perfgym.tasks.suite import Suite


@dataclass
class FileCandidate(Candidate):
    """A candidate read from a file, with the line's fields perfgym does not read."""

    meta: dict[str, Any] = field(default_factory=dict)


def _decode(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        n = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError(
            f"{path}:{n}: not UTF-8 text (byte 0x{data[exc.start]:02x} at column {col}); "
            "a candidates file is JSON lines in UTF-8"
        ) from None


def _records(raw: str, suite: Suite, fmt: Format) -> list[CandidateRecord]:
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise LineError(f"not JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise LineError("JSON nested too deeply") from None
    known = {t.id: t for t in suite.tasks}
    records = parse_record(obj, known, fmt)
    for r in records:
        if r.task_id not in known:
            raise LineError(f"unknown task_id {r.task_id!r} in suite {suite.name}")
    return records


def read_candidates(
    path: Path, suite: Suite, fmt: Format = "auto"
) -> tuple[list[FileCandidate], list[str]]:
    """(candidates, problems): every unusable line is named with its number and reason, and a
    line repeating a (task, model, sample) already read is one. A file that is not UTF-8 is
    refused whole (ConfigError naming the line): it is the wrong file."""
    try:
        text = _decode(path)
    except OSError as exc:
        return [], [f"cannot read {path}: {exc.strerror}"]
    tasks = {t.id: t for t in suite.tasks}
    out: list[FileCandidate] = []
    problems: list[str] = []
    seen: dict[tuple[str, str, int], int] = {}
    next_sample: dict[tuple[str, str], int] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            records = _records(raw, suite, fmt)
            for r in records:
                key = (r.task_id, r.model)
                sample = r.sample if r.sample is not None else next_sample.get(key, 0)
                if (r.task_id, r.model, sample) in seen:
                    first = seen[(r.task_id, r.model, sample)]
                    raise LineError(f"duplicate of line {first}: task {r.task_id!r}, model "
                                    f"{r.model!r}, sample {sample}")  # fmt: skip
        except LineError as exc:
            problems.append(f"line {n}: {exc}")
            continue
        for r in records:
            key = (r.task_id, r.model)
            sample = r.sample if r.sample is not None else next_sample.get(key, 0)
            seen[(r.task_id, r.model, sample)] = n
            next_sample[key] = max(next_sample.get(key, 0), sample + 1)
            out.append(FileCandidate(tasks[r.task_id], r.completion, r.source, r.model, sample,
                                     meta=r.meta))  # fmt: skip
    return out, problems


def with_meta(verdicts: Sequence[Verdict], candidates: Sequence[Candidate]) -> list[Verdict]:
    """The verdicts carrying their candidate line's unknown fields (matched by task, model and
    sample), so they survive into the results file. Apply it before a verdict is written: the
    judge (and the store, which keys verdicts by content) never sees the line's fields."""
    metas = {(c.task.id, c.model, c.sample): c.meta for c in candidates
             if isinstance(c, FileCandidate) and c.meta}  # fmt: skip
    if not metas:
        return list(verdicts)
    return [v.model_copy(update={"meta": metas[key]})
            if (key := (v.task_id, v.model, v.sample)) in metas else v
            for v in verdicts]  # fmt: skip
