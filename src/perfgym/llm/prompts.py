"""Prompts: jinja2 templates shipped with perfgym (or a user's file), rendered into chat messages.

Three prompts, each a template with a `system` and a `user` block:
  - `generate`: RLPF's generation prompt fields (task, goal, metric, correctness rule, interface,
    baseline source, allowed includes) and its JSON answer (`summary`, `solution_source`);
  - `optimize`: Afterburner's optimisation prompt (problem, current code, its pass status and its
    time, memory and integral relative to the baseline, the objective);
  - `repair`: after a failure, the stage reached and the first failing test's message (bounded).
Rendering returns the messages with the template's id and the sha256 of its text: results
record both, so a changed template is never mistaken for the shipped one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from perfgym.errors import ConfigError
from perfgym.llm.protocol import Message
from perfgym.tasks.task import Language, Task

PromptKind = Literal["generate", "optimize", "repair"]
Objective = Literal["time", "memory", "integral"]

#: RLPF's JSON answer, as a JSON schema for `response_format` (strict: both keys, nothing else).
ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"summary": {"type": "string"}, "solution_source": {"type": "string"}},
    "required": ["summary", "solution_source"],
}

#: The most characters of a failure message fed back (head and tail kept, the middle elided).
MAX_FEEDBACK_CHARS = 2000

#: How a fenced block is tagged for each language in prompts.
FENCE: dict[Language, str] = {
    Language.PYTHON: "python", Language.C: "c", Language.CPP: "cpp", Language.JAVA: "java",
    Language.GO: "go", Language.JAVASCRIPT: "javascript", Language.RUST: "rust",
    Language.CUDA: "cuda",
}  # fmt: skip

_SOURCE_NAMES: dict[Language, str] = {
    Language.PYTHON: "solution.py", Language.C: "solution.c", Language.CPP: "solution.cpp",
    Language.JAVA: "Main.java", Language.GO: "main.go", Language.JAVASCRIPT: "solution.js",
    Language.RUST: "main.rs", Language.CUDA: "solution.cu",
}  # fmt: skip

_OBJECTIVE_TEXT: dict[str, str] = {
    "time": "more time-efficient",
    "memory": "more memory-efficient",
    "integral": "both more time-efficient and more memory-efficient",
}

_STAGE_TEXT: dict[str, str] = {
    "NX": "no program could be extracted from the answer",
    "NC": "the program did not build",
    "NR": "the program crashed, timed out or exceeded a limit",
    "WO": "the program ran but printed a wrong answer",
}


@dataclass(frozen=True)
class RenderedPrompt:
    """The chat messages of one prompt, and which template (id and text hash) made them."""

    messages: list[Message]
    template_id: str
    template_sha256: str


@dataclass(frozen=True)
class Template:
    """A template's text and identity (shipped: `perfgym/<kind>`; a file: `file:<name>`)."""

    kind: PromptKind
    text: str
    template_id: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


def load_template(kind: PromptKind, override: str | Path | None = None) -> Template:
    """The shipped template of `kind`, or the user's file (ConfigError if unreadable)."""
    if override is None:
        text = resources.files("perfgym.llm").joinpath("templates", f"{kind}.j2").read_text("utf-8")
        return Template(kind, text, f"perfgym/{kind}")
    path = Path(override)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read prompt template {path}: {exc}") from None
    return Template(kind, text, f"file:{path.name}")


def render(template: Template, context: dict[str, Any]) -> RenderedPrompt:
    """The template's `system` and `user` blocks rendered with `context` (strict: a variable the
    template names and the context lacks is a ConfigError, never a silent blank)."""
    import jinja2

    env = jinja2.Environment(
        undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False
    )
    try:
        compiled = env.from_string(template.text)
        if "user" not in compiled.blocks:
            raise ConfigError(f"prompt template {template.template_id}: no 'user' block")
        ctx = compiled.new_context(dict(context))
        parts = {name: "".join(compiled.blocks[name](ctx)).strip()
                 for name in ("system", "user") if name in compiled.blocks}  # fmt: skip
    except jinja2.TemplateError as exc:
        raise ConfigError(f"prompt template {template.template_id}: {exc}") from None
    messages: list[Message] = []
    if parts.get("system"):
        messages.append({"role": "system", "content": parts["system"]})
    messages.append({"role": "user", "content": parts["user"]})
    return RenderedPrompt(messages, template.template_id, template.sha256)


def task_fields(task: Task) -> dict[str, Any]:
    """The fields every prompt shows of a task."""
    return {
        "task_id": task.id,
        "title": task.title or task.id,
        "goal": task.goal.strip(),
        "metric": task.metric.strip() or "wall time of the performance workloads",
        "correctness_rule": task.correctness_rule.strip() or "the output must be correct",
        "interface": task.interface.strip(),
        "allowed_includes": list(task.allowed_external_includes),
        "language": _language_name(task.language),
        "fence": FENCE[task.language],
        "source_name": source_name(task),
    }


def source_name(task: Task) -> str:
    if task.harness is not None:
        return task.harness.solution_filename
    return _SOURCE_NAMES[task.language]


def generation_prompt(task: Task, *, override: str | Path | None = None) -> RenderedPrompt:
    """RLPF's generation prompt for `task`, with its baseline source."""
    fields = {**task_fields(task), "baseline_source": task.baseline.source.rstrip("\n")}
    return render(load_template("generate", override), fields)


def optimization_prompt(
    task: Task,
    current_source: str,
    *,
    passed: bool,
    objective: Objective = "time",
    stage: str = "",
    time_ratio: float | None = None,
    memory_ratio: float | None = None,
    integral_ratio: float | None = None,
    override: str | Path | None = None,
) -> RenderedPrompt:
    """Afterburner's prompt: revise `current_source`, told whether it passed and its measured
    time, peak memory and memory integral as ratios to the baseline's (1.0 = the baseline)."""
    if objective not in _OBJECTIVE_TEXT:
        raise ConfigError(f"unknown objective {objective!r}; one of time, memory, integral")
    fields = {
        **task_fields(task),
        "current_source": current_source.rstrip("\n"),
        "passed": passed,
        "stage": stage,
        "time": _ratio(time_ratio),
        "memory": _ratio(memory_ratio),
        "integral": _ratio(integral_ratio),
        "objective": objective,
        "objective_text": _OBJECTIVE_TEXT[objective],
    }
    return render(load_template("optimize", override), fields)


def repair_prompt(
    task: Task,
    source: str,
    *,
    stage: str,
    message: str,
    test_id: str = "",
    override: str | Path | None = None,
) -> RenderedPrompt:
    """The repair prompt: `source` failed at `stage`; `message` (the first failing test's, or the
    build log) is cut to MAX_FEEDBACK_CHARS, keeping its head and tail."""
    fields = {
        **task_fields(task),
        "source": source.rstrip("\n"),
        "stage": stage,
        "stage_text": _STAGE_TEXT.get(stage, ""),
        "message": bounded(message),
        "test_id": test_id,
    }
    return render(load_template("repair", override), fields)


def bounded(text: str, limit: int = MAX_FEEDBACK_CHARS) -> str:
    """`text` if short enough, else its head and tail with the number of characters elided."""
    text = text.strip()
    if len(text) <= limit:
        return text
    keep = limit // 2
    return f"{text[:keep]}\n[... {len(text) - 2 * keep} characters elided ...]\n{text[-keep:]}"


def _ratio(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.2f}x"


def _language_name(language: Language) -> str:
    return {"cpp": "C++", "c": "C", "javascript": "JavaScript", "cuda": "CUDA C++"}.get(
        language.value, language.value.capitalize()
    )
