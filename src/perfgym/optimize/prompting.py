"""The messages of one optimisation call, from the shipped templates (`perfgym.llm.prompts`):
RLPF's generation prompt, Afterburner's optimisation prompt with the measured ratios to the
baseline, the repair prompt with the stage reached and the first failure; each with the
template's id and sha256, recorded beside every step."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from perfgym.llm import prompts
from perfgym.llm.protocol import Message
from perfgym.optimize.feedback import Feedback
from perfgym.optimize.objective import Objective
from perfgym.tasks.task import Task

Purpose = Literal["generate", "optimize", "repair"]


@dataclass(frozen=True)
class Prompt:
    messages: list[Message]
    template_id: str
    template_hash: str


def prompt_for(purpose: Purpose, task: Task, objective: Objective, source: str | None = None,
               feedback: Feedback | None = None) -> Prompt:  # fmt: skip
    """The messages for one call, and the id and hash of the template that made them."""
    if purpose == "generate":
        r = prompts.generation_prompt(task)
    elif purpose == "repair":
        assert source is not None and feedback is not None
        r = prompts.repair_prompt(task, source, stage=feedback.stage, message=feedback.message,
                                  test_id=feedback.test_id)  # fmt: skip
    else:
        assert source is not None and feedback is not None
        r = prompts.optimization_prompt(
            task, source, passed=feedback.passed, objective=objective, stage=feedback.stage,
            time_ratio=feedback.time_vs_baseline, memory_ratio=feedback.memory_vs_baseline,
            integral_ratio=feedback.integral_vs_baseline)  # fmt: skip
    return Prompt(r.messages, r.template_id, r.template_sha256)
