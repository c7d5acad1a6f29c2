"""The messages of one optimisation call: generate, optimise (Afterburner's) or repair, with the
template's id and hash recorded beside every step."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

from perfgym.llm.protocol import Message
from perfgym.optimize.feedback import Feedback
from perfgym.optimize.objective import Objective
from perfgym.tasks.task import Task

Purpose = Literal["generate", "optimize", "repair"]

_WANT = {"time": "time-efficient", "memory": "memory-efficient",
         "integral": "both-time-and-memory-efficient"}  # fmt: skip


@dataclass(frozen=True)
class Prompt:
    messages: list[Message]
    template_id: str
    template_hash: str


def _num(x: float | None, unit: str) -> str:
    return "not measured" if x is None else f"{x:.4g} {unit}"


def _rel(x: float | None) -> str:
    return "" if x is None else f" ({x:.3f}x the baseline)"


def _performance(fb: Feedback) -> str:
    if not fb.passed:
        return f"Passed: no (stage {fb.stage})\nFirst failure: {fb.message or '(no message)'}"
    return (f"Passed: yes\nTime: {_num(fb.time_s, 's')}{_rel(fb.time_vs_baseline)}\n"
            f"Memory: {_num(fb.memory_mb, 'MiB')}{_rel(fb.memory_vs_baseline)}\n"
            f"Integral: {_num(fb.integral_mb_s, 'MiB*s')}{_rel(fb.integral_vs_baseline)}")  # fmt: skip


def _problem(task: Task) -> str:
    parts = [
        f"Task: {task.id}",
        task.title,
        task.goal.strip(),
        "Interface:",
        task.interface.strip(),
    ]
    if task.correctness_rule:
        parts.append(f"Correctness: {task.correctness_rule}")
    return "\n".join(p for p in parts if p)


_SYSTEM = ("You are an expert competitive programmer who writes correct and efficient "
           "{lang} code. Answer with one markdown code block holding the whole program.")  # fmt: skip


def _builtin(purpose: Purpose, task: Task, objective: Objective, source: str | None,
             fb: Feedback | None) -> tuple[str, str]:  # fmt: skip
    lang = task.language.value
    if purpose == "generate":
        body = (f"## Problem Description\n{_problem(task)}\n\n## Baseline Solution\n```{lang}\n"
                f"{task.baseline.source}\n```\n\n## Output Format\nWrite a faster, correct "
                f"{lang} program for this task as one markdown code block.")  # fmt: skip
        return "builtin/generate", body
    assert fb is not None and source is not None
    what = ("Fix the original solution: it did not pass." if purpose == "repair" else
            f"Optimize the {_WANT[objective]} performance of the original solution; keep it "
            "correct.")  # fmt: skip
    body = (f"## Problem Description\n{_problem(task)}\n\n## Original Solution\n```{lang}\n"
            f"{source}\n```\n\n## Original Performance\n{_performance(fb)}\n\n"
            f"## Output Format\n{what} Answer with one markdown code block in {lang}.")  # fmt: skip
    return f"builtin/{purpose}", body


def prompt_for(purpose: Purpose, task: Task, objective: Objective, source: str | None = None,
               feedback: Feedback | None = None) -> Prompt:  # fmt: skip
    """The messages for one call, and the id and hash of the template that made them."""
    template_id, body = _builtin(purpose, task, objective, source, feedback)
    system = _SYSTEM.format(lang=task.language.value)
    digest = hashlib.sha256(f"{_SYSTEM}\0{template_id}".encode()).hexdigest()[:16]
    messages: list[Message] = [{"role": "system", "content": system},
                               {"role": "user", "content": body}]  # fmt: skip
    return Prompt(messages, template_id, digest)
