"""Twins: candidates of one task that are the same program (the same bytes) are judged once, and
a candidate that is the baseline's or the reference's program is not timed again.

Late in GRPO training a group's completions are often one program, or the prompt's own baseline
handed back; measuring each copy again costs a batch the most time and buys only noise (two
measurements of one program differ by noise alone, and that noise would become a reward
difference between identical answers).

Identity by construction: two candidates are twins only when their extracted sources are the
same text (the same bytes once written) and the same argv, in every language; a candidate has a
role's timing only when its source is that role's source exactly. Nothing a program can do
tells two such candidates apart, since what a program can read of itself (its file, its size,
its line numbers, its frames, `/proc/self`) is the same. A comment, a trailing space, a CRLF or
a BOM make another program, judged on its own. No rule here lists ways a program reads itself:
such a list always misses one (`posixpath.getsize` got past the last one).

What a twin still gets of its own: its verdict's sample, model, suite, source and extraction
rule. What it shares: every test result, the stage, the timing. A role's copy still runs every
correctness test; its timed runs are the role's (measured anyway), whose outputs are checked
against the workloads' expected outputs as the copy's own would be. A correctness-only run
judges every distinct candidate as before.

Not a twin rule: `perfgym.judge.same_source` (equal normalised sources: comments and layout
aside) makes a candidate a tie with the baseline or reference in the rewards and metrics, no
speed credit either way; it shares no result, and such a copy is measured like any program.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from perfgym.judge.record import Entry
from perfgym.judge.variant import Variant
from perfgym.judge.verdict import Timing, Verdict
from perfgym.tasks.task import Task

#: On a verdict judged as another candidate's twin (the same program, judged once).
SAME_PROGRAM = "same_program_judged_once"
#: On a candidate's timing taken from the baseline's or the reference's (the same program).
ROLE_TIMING = "timing_of_same_program"


def representatives(task: Task, entries: Sequence[Entry]) -> tuple[list[int], dict[int, int]]:
    """(the indices to judge, twin index → its representative's index). Entries stopped at
    extraction (no source, or one that cannot be run) are each their own; the others are twins
    where `twin_key` and the argv are equal."""
    first: dict[tuple[str, tuple[str, ...]], int] = {}
    judged: list[int] = []
    twin_of: dict[int, int] = {}
    for i, e in enumerate(entries):
        key = twin_key(task, e.variant.source) if e.going else None  # stopped: its own verdict
        if key is None:
            judged.append(i)
            continue
        full = (key, tuple(e.variant.argv))
        if full in first:
            twin_of[i] = first[full]
        else:
            first[full] = i
            judged.append(i)
    return judged, twin_of


def twin_key(task: Task, source: str | None) -> str | None:
    """What two candidates of `task` must share to be judged once (None: judged alone): the
    task's language and the extracted source, exactly (its bytes once written: a comment, a
    trailing space, a line ending or a BOM apart are two programs)."""
    if source is None:
        return None
    return f"{task.language.value}\0{source}"


def twin_verdict(rep: Verdict, entry: Entry) -> Verdict:
    """`rep`'s verdict for its twin `entry`, with what is the twin's own."""
    c, v = entry.candidate, entry.variant
    flags = [*rep.flags, SAME_PROGRAM] if SAME_PROGRAM not in rep.flags else list(rep.flags)
    return rep.model_copy(
        deep=True,
        update={"sample": c.sample, "model": c.model, "suite": c.suite, "source": v.source,
                "extraction_rule": v.extraction_rule, "flags": flags},
    )  # fmt: skip


def role_of(entry: Entry, roles: Mapping[str, Variant]) -> str | None:
    """The measured role ('baseline' or 'reference', in `roles`: the measured ones' variants)
    whose program the passing `entry` is, if any (the reference first: it is measured in every
    mode): the same source exactly and the same argv, as for twins (`twin_key`). A copy with a
    comment of its own is measured (and ties with the role by `perfgym.judge.same_source`)."""
    if not entry.going or entry.variant.source is None:
        return None
    for label in ("reference", "baseline"):
        role = roles.get(label)
        if (
            role is not None
            and role.source == entry.variant.source
            and role.argv == entry.variant.argv
        ):
            return label
    return None


def role_timing(timing: Timing) -> Timing:
    """A role's timing, handed to a candidate that is its program."""
    flags = timing.flags if ROLE_TIMING in timing.flags else [*timing.flags, ROLE_TIMING]
    return timing.model_copy(deep=True, update={"flags": flags})
