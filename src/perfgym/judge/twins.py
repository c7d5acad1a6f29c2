"""Twins: candidates of one task that are the same program (equal normalised sources,
`perfgym.judge.same_source`) are judged once, and a candidate that is the baseline's or the
reference's program is not timed again: it has that role's timing.

Late in GRPO training a group's completions are often one program with different comments, or
the prompt's own baseline handed back; measuring each copy again costs a batch the most time
and buys only noise (two measurements of one program differ by noise alone, and that noise
would become a reward difference between identical answers).

What a twin still gets of its own: its verdict's sample, model, suite, source and extraction
rule. What it shares: every test result, the stage, the timing. Nothing can score a twin above
its representative: it *is* the representative's program (comments and layout aside), and the
verdict is one real judgement of that program; a program that could read its own text (and
so tell its comments apart) is never a twin (`INTROSPECTION`). A role's copy still runs every
correctness test; its timed runs are the role's (measured anyway), whose outputs are then
checked against the workloads' expected outputs as the copy's own would be. A
correctness-only run judges every distinct candidate as before.
"""

from __future__ import annotations

from collections.abc import Sequence

from perfgym.judge.record import Entry
from perfgym.judge.same_source import normalised, same_source_roles
from perfgym.judge.verdict import Timing, Verdict
from perfgym.tasks.task import Task

#: A program whose text holds one of these may read its own text or line numbers (its source
#: file, its frames, its stack): its comments and layout may change what it does, so it is
#: never anyone's twin and never takes a role's timing.
INTROSPECTION = ("__file__", "argv", "inspect", "linecache", "traceback", "_getframe",
                 "currentframe", "f_lineno", "co_", "__loader__", "__spec__", "/proc",
                 "__LINE__", "__FILE__", "source_location", "file!", "line!", "Caller",
                 "stack", "Stack", "getResource")  # fmt: skip
#: On a verdict judged as another candidate's twin (the same program, judged once).
SAME_PROGRAM = "same_program_judged_once"
#: On a candidate's timing taken from the baseline's or the reference's (the same program).
ROLE_TIMING = "timing_of_same_program"


def representatives(task: Task, entries: Sequence[Entry]) -> tuple[list[int], dict[int, int]]:
    """(the indices to judge, twin index → its representative's index). Entries without a
    source (stopped at extraction) are each their own."""
    first: dict[tuple[str, tuple[str, ...]], int] = {}
    judged: list[int] = []
    twin_of: dict[int, int] = {}
    for i, e in enumerate(entries):
        source = e.variant.source
        if source is None or introspective(source):
            judged.append(i)
            continue
        key = (normalised(source, task.language), tuple(e.variant.argv))
        if key in first:
            twin_of[i] = first[key]
        else:
            first[key] = i
            judged.append(i)
    return judged, twin_of


def introspective(source: str) -> bool:
    """Whether `source` may read its own text or line numbers (`INTROSPECTION`)."""
    return any(word in source for word in INTROSPECTION)


def twin_verdict(rep: Verdict, entry: Entry) -> Verdict:
    """`rep`'s verdict for its twin `entry`, with what is the twin's own."""
    c, v = entry.candidate, entry.variant
    flags = [*rep.flags, SAME_PROGRAM] if SAME_PROGRAM not in rep.flags else list(rep.flags)
    return rep.model_copy(
        deep=True,
        update={"sample": c.sample, "model": c.model, "suite": c.suite, "source": v.source,
                "extraction_rule": v.extraction_rule, "flags": flags},
    )  # fmt: skip


def role_of(task: Task, entry: Entry, measured: set[str]) -> str | None:
    """The measured role ('baseline' or 'reference') whose program the passing `entry` is, if
    any (the reference first: it is measured in every mode)."""
    if not entry.going or entry.variant.source is None or introspective(entry.variant.source):
        return None
    roles = same_source_roles(task, entry.variant.source)
    for role in ("reference", "baseline"):
        if role in roles and role in measured:
            return role
    return None


def role_timing(timing: Timing) -> Timing:
    """A role's timing, handed to a candidate that is its program."""
    flags = timing.flags if ROLE_TIMING in timing.flags else [*timing.flags, ROLE_TIMING]
    return timing.model_copy(deep=True, update={"flags": flags})
