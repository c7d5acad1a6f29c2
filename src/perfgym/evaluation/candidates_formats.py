"""The record shapes a candidates line may take: perfgym's own, evalplus samples, lm-eval samples.

perfgym's own: `task_id`, `model`, `sample`, and `completion` (raw model text) or `source` (a
ready program). evalplus (`codegen` samples): `task_id` and `solution` (the whole program) or
`completion` (a body that continues the task's prompt, as evalplus prepends it). lm-eval
(`--log_samples`): `doc.task_id` and `filtered_resps` (else `resps`), one candidate per response.
Fields none of these read are kept as the verdict's `meta`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from perfgym.errors import PerfgymError

if TYPE_CHECKING:  # `--help` reads FORMATS; the data models load when a file is read
    from perfgym.tasks.task import Task

Format = Literal["auto", "perfgym", "evalplus", "lm-eval"]
FORMATS: tuple[str, ...] = ("auto", "perfgym", "evalplus", "lm-eval")

_NATIVE = ("task_id", "model", "sample", "completion", "source", "solution")
#: lm-eval fields too large or too internal to copy onto every verdict (the task holds the doc).
_LM_EVAL_DROPPED = ("doc", "arguments", "resps", "filtered_resps")


class LineError(PerfgymError, ValueError):
    """A candidates line that cannot be used; the message names the field and why."""


@dataclass
class CandidateRecord:
    """One candidate read from a line, before it meets the judge."""

    task_id: str
    model: str
    sample: int | None
    completion: str | None = None
    source: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


def is_lm_eval(obj: dict[str, Any]) -> bool:
    return "doc" in obj and ("resps" in obj or "filtered_resps" in obj)


def code_prompt(task: Task) -> str | None:
    """The code a `completion` continues (HumanEval-style tasks: the signature and docstring),
    or None when the task has no such prompt."""
    from perfgym.tasks.task import Language, TaskKind

    if task.kind is not TaskKind.FUNCTION or task.language is not Language.PYTHON:
        return None
    if task.entry_point and f"def {task.entry_point}(" in task.goal:
        return task.goal
    return None


def is_body(text: str) -> bool:
    """A continuation of a prompt: its first non-blank line is indented (a function body), so it
    is neither prose nor a fenced or whole program."""
    for line in text.splitlines():
        if line.strip():
            return line[:1] in (" ", "\t")
    return False


def _text(obj: dict[str, Any], name: str) -> str | None:
    value = obj.get(name)
    if value is not None and not isinstance(value, str):
        raise LineError(f"{name}: expected a string, got {type(value).__name__}")
    return value


def _model_and_sample(obj: dict[str, Any]) -> tuple[str, int | None]:
    model = obj.get("model", "model")
    if not isinstance(model, str) or not model:
        raise LineError(f"model: expected a non-empty string, got {model!r}")
    sample = obj.get("sample")
    if sample is not None and (isinstance(sample, bool) or not isinstance(sample, int)):
        raise LineError(f"sample: expected an integer, got {sample!r}")
    if sample is not None and sample < 0:
        raise LineError(f"sample: expected 0 or more, got {sample}")
    return model, sample


def _task_id(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise LineError(f"{where}: expected a task id string, got {value!r}")
    return value


def continued(task: Task | None, completion: str, fmt: Format) -> tuple[str | None, str | None]:
    """(completion, source): a body continuing the task's prompt becomes a whole program, the
    prompt prepended (evalplus's rule: always under --format evalplus, for an indented body
    otherwise, never under --format perfgym); anything else stays raw text for extraction."""
    prompt = code_prompt(task) if task is not None else None
    if prompt is not None and (fmt == "evalplus" or (fmt != "perfgym" and is_body(completion))):
        return None, prompt + completion
    return completion, None


def native_or_evalplus(
    obj: dict[str, Any], task: Task | None, fmt: Format
) -> list[CandidateRecord]:
    """perfgym's own line or an evalplus sample: one record."""
    task_id = _task_id(obj.get("task_id"), "task_id")
    model, sample = _model_and_sample(obj)
    completion, source, solution = (_text(obj, k) for k in ("completion", "source", "solution"))
    given = [k for k, v in (("completion", completion), ("source", source),
                            ("solution", solution)) if v is not None]  # fmt: skip
    if len(given) != 1:
        named = ", ".join(given) if given else "none"
        raise LineError(f"give exactly one of 'completion', 'source' or 'solution' (got {named})")
    meta = {k: v for k, v in obj.items() if k not in _NATIVE}
    if solution is not None:
        return [CandidateRecord(task_id, model, sample, source=solution, meta=meta)]
    if source is not None:
        return [CandidateRecord(task_id, model, sample, source=source, meta=meta)]
    assert completion is not None
    text, program = continued(task, completion, fmt)
    return [CandidateRecord(task_id, model, sample, completion=text, source=program, meta=meta)]


def _responses(obj: dict[str, Any]) -> list[str]:
    """The texts of an lm-eval record: `filtered_resps` (after lm-eval's filters) else `resps`;
    each either a list of strings or a list holding one list of strings (one request)."""
    name = "filtered_resps" if "filtered_resps" in obj else "resps"
    value = obj[name]
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], list):
        value = value[0]
    if not isinstance(value, list) or not value or not all(isinstance(x, str) for x in value):
        raise LineError(
            f"{name}: expected a list of response strings (one generation request); a "
            "record with several requests or non-text responses is ambiguous"
        )
    return value


def lm_eval(obj: dict[str, Any], known: dict[str, Task], fmt: Format) -> list[CandidateRecord]:
    """An lm-eval sample record: one record per response, samples numbered in order."""
    doc = obj.get("doc")
    if not isinstance(doc, dict) or "task_id" not in doc:
        raise LineError("doc.task_id: an lm-eval record must name its task in doc.task_id")
    task_id = _task_id(doc["task_id"], "doc.task_id")
    model, sample = _model_and_sample(obj)
    if sample is not None:
        raise LineError("sample: an lm-eval record numbers its responses itself")
    meta = {k: v for k, v in obj.items() if k not in _LM_EVAL_DROPPED and k != "model"}
    task = known.get(task_id)
    out = []
    for n, text in enumerate(_responses(obj)):
        completion, source = continued(task, text, fmt)
        out.append(CandidateRecord(task_id, model, n, completion, source, dict(meta)))
    return out


def parse_record(obj: Any, known: dict[str, Task], fmt: Format = "auto") -> list[CandidateRecord]:
    """The candidates on one parsed JSON line, in the given (or detected) format."""
    if not isinstance(obj, dict):
        raise LineError(f"expected a JSON object, got {type(obj).__name__}")
    if fmt == "lm-eval" or (fmt == "auto" and is_lm_eval(obj)):
        return lm_eval(obj, known, fmt)
    if fmt == "perfgym" and "solution" in obj:
        raise LineError("solution: not a perfgym field (use 'source', or --format evalplus)")
    task_id = obj.get("task_id")
    task = known.get(task_id) if isinstance(task_id, str) else None
    return native_or_evalplus(obj, task, fmt)
