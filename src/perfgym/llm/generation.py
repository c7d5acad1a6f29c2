"""Generating candidates: k samples of RLPF's prompt per task, each answer one candidates line.

A line is perfgym's own candidates format (`task_id`, `model`, `sample`, and `source` — the
program the judge's extraction found — or `completion`, the raw answer, when extraction found
none: the judge then records NX with the same reason). Its `generation` field keeps the raw
answer, the extraction rule, usage, cost, retries, truncation and the template's id and hash.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfgym.judge.extract import extract
from perfgym.llm.prompts import ANSWER_SCHEMA, RenderedPrompt, generation_prompt
from perfgym.llm.protocol import ChatModel, Completion
from perfgym.tasks.task import Task

Line = dict[str, Any]


@dataclass(frozen=True)
class Job:
    """One sample to generate."""

    task: Task
    sample: int
    prompt: RenderedPrompt


def candidate_line(task: Task, model: str, sample: int, prompt: RenderedPrompt,
                   answer: Completion) -> Line:  # fmt: skip
    """The candidates line of one answer (see the module docstring)."""
    got = extract(answer.text, task.language)
    line: Line = {"task_id": task.id, "model": model, "sample": sample}
    if got.source is not None:
        line["source"] = got.source
    else:
        line["completion"] = answer.text
    line["generation"] = {
        "raw_answer": answer.text if got.source is not None else None,
        "extraction_rule": got.rule,
        "extraction_reason": got.reason,
        "finish_reason": answer.finish_reason,
        "truncated": answer.truncated,
        "usage": answer.usage.model_dump(),
        "cost_usd": answer.cost_usd,
        "retries": answer.retries,
        "call_key": answer.call_key,
        "template_id": prompt.template_id,
        "template_sha256": prompt.template_sha256,
    }
    return line


def plan(tasks: list[Task], samples: int, model: str, done: set[tuple[str, str, int]],
         override: str | Path | None = None) -> list[Job]:  # fmt: skip
    """The samples still to generate, task by task (one rendering per task)."""
    jobs: list[Job] = []
    for task in tasks:
        missing = [k for k in range(samples) if (task.id, model, k) not in done]
        if missing:
            prompt = generation_prompt(task, override=override)
            jobs.extend(Job(task, k, prompt) for k in missing)
    return jobs


async def run_jobs(
    client: ChatModel,
    jobs: list[Job],
    model: str,
    *,
    json_output: bool,
    on_line: Callable[[Line], None],
    on_task: Callable[[str], None] | None = None,
) -> None:
    """Generate every job, handing each line to `on_line` as its answer arrives and each task's
    id to `on_task` once all its jobs' lines are out. The first error cancels the rest and is
    raised (the lines already handed out stay handed out)."""
    left: dict[str, int] = {}
    for j in jobs:
        left[j.task.id] = left.get(j.task.id, 0) + 1

    async def one(job: Job) -> None:
        answer = await client.complete(
            job.prompt.messages,
            sample_index=job.sample,
            json_schema=ANSWER_SCHEMA if json_output else None,
            purpose="generate",
        )
        on_line(candidate_line(job.task, model, job.sample, job.prompt, answer))
        left[job.task.id] -= 1
        if left[job.task.id] == 0 and on_task is not None:
            on_task(job.task.id)

    pending = {asyncio.ensure_future(one(j)) for j in jobs}
    try:
        while pending:
            finished, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_EXCEPTION)
            errors = [e for f in finished if (e := f.exception()) is not None]
            if errors:
                raise errors[0]
    finally:
        for f in pending:
            f.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
