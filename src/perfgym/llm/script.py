"""`Script`: the answers a scripted model gives, per task, loaded from JSON/YAML or built in Python.

A script maps task keys to answer lists. The task of a request is the longest key that occurs
in the text of its messages (a key "*" catches requests no other key matches). An answer is a
string (the message content) or a mapping with `content`, `finish_reason`, `tool_calls` and
`delay_s` (seconds the server waits before answering).

    {"model": "scripted", "tasks": {"py-hash-join": ["```python\\n...```", {"content": ...}]}}
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from perfgym.errors import ConfigError

#: The key that matches any request no other key matches.
CATCH_ALL = "*"


class ScriptedAnswer(BaseModel):
    """One scripted answer: the message the server returns for one choice."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    content: str | None = ""
    finish_reason: str = "stop"
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    delay_s: float = Field(default=0.0, ge=0.0, le=600.0)


class Script(BaseModel):
    """Task key -> answers, in the order a task's successive prompts receive them."""

    model_config = ConfigDict(extra="forbid")

    model: str = "scripted"
    tasks: dict[str, list[ScriptedAnswer]] = Field(default_factory=dict)

    @field_validator("tasks", mode="before")
    @classmethod
    def _answers(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        out: dict[str, list[Any]] = {}
        for key, answers in value.items():
            if isinstance(answers, (str, dict)):
                answers = [answers]
            if not isinstance(answers, list) or not answers:
                raise ValueError(f"task {key!r}: answers must be a non-empty list")
            out[key] = [{"content": a} if isinstance(a, str) else a for a in answers]
        return out

    def add(self, key: str, *answers: str | ScriptedAnswer) -> Script:
        """Append answers to `key` (building a script in Python); returns the script."""
        items = [a if isinstance(a, ScriptedAnswer) else ScriptedAnswer(content=a) for a in answers]
        self.tasks.setdefault(key, []).extend(items)
        return self

    def task_of(self, text: str) -> str | None:
        """The longest key occurring in `text`, else the catch-all key if present, else None."""
        best: str | None = None
        for key in self.tasks:
            if key != CATCH_ALL and key in text and (best is None or len(key) > len(best)):
                best = key
        if best is None and CATCH_ALL in self.tasks:
            return CATCH_ALL
        return best

    def answer(self, key: str, position: int) -> ScriptedAnswer:
        """The answer at `position` of `key`'s list; the last one once the list is exhausted."""
        answers = self.tasks[key]
        return answers[min(position, len(answers) - 1)]

    def dump(self, path: Path) -> None:
        """Write the script as JSON (`load_script` reads it back)."""
        path.write_text(self.model_dump_json(indent=1), encoding="utf-8")


def load_script(path: str | Path) -> Script:
    """Read a JSON or YAML script; a malformed file is a ConfigError naming it and the field."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read script {path}: {exc}") from None
    try:
        if path.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except Exception as exc:  # yaml.YAMLError or json.JSONDecodeError: the file is not parseable
        raise ConfigError(f"script {path} is not valid {path.suffix[1:] or 'JSON'}: "
                          f"{str(exc).splitlines()[0]}") from None  # fmt: skip
    if not isinstance(data, dict):
        raise ConfigError(
            f"script {path}: expected a mapping with 'tasks', got {type(data).__name__}"
        )
    try:
        return Script.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"script {path}: {where}: {first['msg']}") from None
