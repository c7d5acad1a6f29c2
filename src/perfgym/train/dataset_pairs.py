"""SFT and DPO pairs (Afterburner, paper 004 §4): a less efficient -> more efficient correct
solution as a chat example (SFT), and chosen/rejected answers to one prompt (DPO), from a suite's
graded pool or from judged verdicts (results files, or the pool measured here)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from perfgym.errors import ConfigError
from perfgym.judge.same_source import normalised
from perfgym.judge.verdict import Verdict
from perfgym.tasks.suite import Suite
from perfgym.tasks.task import Solution, Task
from perfgym.timing.compare import compare_timings
from perfgym.timing.result import Timing
from perfgym.train.prompt import rlpf_messages

__all__ = ["SolutionEntry", "dpo_rows", "entries_from_verdicts", "graded_ladder", "sft_rows"]


@dataclass(frozen=True)
class SolutionEntry:
    """One solution of a task with what is known of it. `rank` orders a graded pool (higher is
    faster); `timing` and `measurement` (the id of the measurement it was timed in: entries of
    one measurement share rounds, so their comparison is paired) come from a verdict."""

    task_id: str
    label: str
    source: str
    correct: bool
    stage: str = "OK"
    rank: float | None = None
    timing: Timing | None = None
    measurement: str | None = None


def graded_ladder(task: Task) -> list[SolutionEntry]:
    """baseline < pool (by quality) < reference: graded correct solutions, slowest first. Pool
    members without a quality are left out (their place is unknown)."""
    entries = [SolutionEntry(task.id, "baseline", task.baseline.source, True, rank=0.0)]
    pool = sorted((p for p in task.pool if p.quality is not None), key=lambda p: p.quality or 0)
    entries += [
        SolutionEntry(task.id, p.label, p.source, True, rank=1.0 + i) for i, p in enumerate(pool)
    ]
    top = 1.0 + len(pool)
    entries += [
        SolutionEntry(task.id, r.label, r.source, True, rank=top) for r in task.references[:1]
    ]
    return entries


def entries_from_verdicts(suite: Suite, verdicts: Iterable[Verdict], *,
                          where: str = "results") -> list[SolutionEntry]:  # fmt: skip
    """Entries of judged candidates; a ConfigError for a verdict of another suite or a task
    this suite lacks (the results were judged against something else)."""
    ids = set(suite.ids())
    bare = suite.name.split(":", 1)[0]
    out = []
    for v in verdicts:
        if v.suite and v.suite.split(":", 1)[0] != bare:
            raise ConfigError(f"{where}: verdicts are for suite {v.suite!r}, not {bare!r}")
        if v.task_id not in ids:
            raise ConfigError(f"{where}: task {v.task_id!r} is not in suite {bare!r}")
        if v.infra_error or v.source is None:
            continue  # nothing to learn from: no program, or perfgym failed to judge it
        base = v.baseline
        measurement = json.dumps(base.samples_s) if base is not None and base.samples_s else None
        out.append(SolutionEntry(v.task_id, f"{v.model or 'model'}#{v.sample}", v.source, v.correct,
                         stage=v.stage.value, timing=v.candidate, measurement=measurement))  # fmt: skip
    return out


def _faster(a: SolutionEntry, b: SolutionEntry) -> tuple[bool, float | None, str]:
    """Is `a` faster than `b`? (decision, b/a ratio when measured, evidence). Measured entries
    need the comparison's significant verdict; graded ones use their ranks."""
    if a.timing is not None and b.timing is not None:
        paired = (a.measurement is not None and a.measurement == b.measurement
                  and len(a.timing.samples_s) == len(b.timing.samples_s))  # fmt: skip
        c = compare_timings(a.timing, b.timing, paired=paired)
        if c is None:
            return False, None, "unmeasured"
        return (
            c.faster == "a",
            1.0 / c.ratio,
            ("significant" if c.significant else "not significant"),
        )
    if a.rank is not None and b.rank is not None:
        return a.rank > b.rank, None, "graded"
    return False, None, "unmeasured"


def _same_program(task: Task, a: SolutionEntry, b: SolutionEntry) -> bool:
    """Two texts of one program (comments and layout aside, `perfgym.judge.same_source`): each
    is measured on its own (perfgym.judge.twins), so any difference between them is noise."""
    return normalised(a.source, task.language) == normalised(b.source, task.language)


def _prompt_for(task: Task, slower: SolutionEntry) -> list[dict[str, str]]:
    """RLPF's prompt with `slower` shown as the current implementation."""
    shown = task.model_copy(update={"baseline": Solution(label=slower.label, source=slower.source)})
    return rlpf_messages(shown)


def _answer(entry: SolutionEntry, summary: str) -> str:
    return json.dumps({"summary": summary, "solution_source": entry.source})


def _by_task(entries: Iterable[SolutionEntry]) -> dict[str, list[SolutionEntry]]:
    grouped: dict[str, list[SolutionEntry]] = {}
    for e in entries:
        grouped.setdefault(e.task_id, []).append(e)
    return grouped


def sft_rows(suite: Suite, entries: Sequence[SolutionEntry]) -> list[dict[str, Any]]:
    """Every (slower correct, faster correct) pair of a task where the faster one is
    significantly faster (or graded above it), as a chat example: the slower code in the
    prompt, the faster code as the answer. Two texts of one program are never a pair."""
    rows = []
    for task_id, group in _by_task(entries).items():
        task = suite.get(task_id)
        correct = [e for e in group if e.correct]
        for slow in correct:
            for fast in correct:
                if fast is slow or _same_program(task, fast, slow):
                    continue
                faster, ratio, evidence = _faster(fast, slow)
                if not faster or evidence == "not significant":
                    continue
                rows.append({
                    "messages": [*_prompt_for(task, slow),
                                 {"role": "assistant", "content": _answer(fast, "faster")}],
                    "task_id": task_id, "language": task.language.value, "split": task.split.value,
                    "slower": slow.label, "faster": fast.label, "speedup": ratio,
                    "evidence": evidence,
                })  # fmt: skip
    return rows


def dpo_rows(suite: Suite, entries: Sequence[SolutionEntry]) -> tuple[list[dict[str, Any]], int]:
    """(rows, left out): chosen = a correct answer significantly faster than the rejected one,
    or the rejected one is incorrect. A pair whose measured difference is not significant (or
    could not be measured), or of two texts of one program, is left out and counted. The
    prompt shows the task's baseline."""
    rows, left_out = [], 0
    for task_id, group in _by_task(entries).items():
        task = suite.get(task_id)
        prompt = rlpf_messages(task)
        for chosen in (e for e in group if e.correct):
            for rejected in group:
                if rejected is chosen or rejected.source == chosen.source:
                    continue
                if rejected.correct and _same_program(task, chosen, rejected):
                    left_out += 1  # a tie by construction (`same_source`): never a preference
                    continue
                if rejected.correct:
                    faster, ratio, evidence = _faster(chosen, rejected)
                    if evidence != "significant":  # graded or unmeasured: no measured margin
                        left_out += 1
                        continue
                    if not faster:
                        continue
                else:
                    ratio, evidence = None, f"rejected is {rejected.stage}"
                rows.append({
                    "prompt": prompt,
                    "chosen": [{"role": "assistant", "content": _answer(chosen, "faster")}],
                    "rejected": [{"role": "assistant", "content": _answer(rejected, "slower")}],
                    "task_id": task_id, "language": task.language.value, "split": task.split.value,
                    "chosen_label": chosen.label, "rejected_label": rejected.label,
                    "rejected_stage": rejected.stage, "margin": ratio, "evidence": evidence,
                })  # fmt: skip
    return rows, left_out
