"""Reading a candidates JSONL file: report broken lines, keep the rest."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from perfgym.errors import ConfigError
from perfgym.judge.judge import Candidate
from perfgym.tasks.suite import Suite


class CandidateLine(BaseModel):
    """One line: `task_id`, `model`, and `completion` (raw model text) or `source`."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    model: str = "model"
    completion: str | None = None
    source: str | None = None
    sample: int | None = None

    @model_validator(mode="after")
    def _one_text(self) -> CandidateLine:
        if (self.completion is None) == (self.source is None):
            raise ValueError("give exactly one of 'completion' or 'source'")
        return self


def read_candidates(path: Path, suite: Suite) -> tuple[list[Candidate], list[str]]:
    """(candidates, problems): every unusable line is named with its number and reason. A file
    that is not UTF-8 is refused whole (ConfigError naming the line): it is the wrong file."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return [], [f"cannot read {path}: {exc.strerror}"]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        n = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError(
            f"{path}:{n}: not UTF-8 text (byte 0x{data[exc.start]:02x} at column {col}); "
            "a candidates file is JSON lines in UTF-8"
        ) from None
    known = {t.id: t for t in suite.tasks}
    out: list[Candidate] = []
    problems: list[str] = []
    counts: dict[tuple[str, str], int] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            line = CandidateLine.model_validate(json.loads(raw))
        except json.JSONDecodeError as exc:
            problems.append(f"line {n}: not JSON ({exc.msg})")
            continue
        except RecursionError:
            problems.append(f"line {n}: JSON nested too deeply")
            continue
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(x) for x in err["loc"]) or "line"
            problems.append(f"line {n}: {where}: {err['msg']}")
            continue
        task = known.get(line.task_id)
        if task is None:
            problems.append(f"line {n}: unknown task_id {line.task_id!r} in suite {suite.name}")
            continue
        key = (line.task_id, line.model)
        sample = line.sample if line.sample is not None else counts.get(key, 0)
        counts[key] = sample + 1
        out.append(Candidate(task, line.completion, line.source, line.model, sample))
    return out, problems
