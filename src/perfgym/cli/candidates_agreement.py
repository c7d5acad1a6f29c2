"""`perfgym eval PCB --candidates-from MODEL`: this run against the model's published results
(`perfgym.judge.candidate_agreement`), in two lines and one line per disagreement."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from perfgym.cli.output import console

if TYPE_CHECKING:
    from perfgym.judge.candidate_agreement import CandidateAgreement
    from perfgym.judge.verdict import Verdict
    from perfgym.tasks.task import Task


def published_agreement(tasks: list[Task], verdicts: list[Verdict],
                        model: str) -> CandidateAgreement:  # fmt: skip
    """The verdicts of `model`'s candidates against its published `eval_result.json`."""
    from perfgym.judge.candidate_agreement import candidate_agreement
    from perfgym.tasks.eval_results import load_candidates

    published = {}
    for t in tasks:
        if t.root is None or t.harness is None:
            continue
        found = [c for c in load_candidates(t) if c.model == model]
        if found:
            published[t.id] = found[0]
    mine = [v for v in verdicts if v.model == model]
    return candidate_agreement(model, mine, published)


def print_agreement(a: CandidateAgreement) -> None:
    def part(c: dict[str, int]) -> str:
        return ", ".join(f"{k} {v}" for k, v in c.items())

    console.print(f"against {escape(a.model)}'s published eval_result.json ({a.tasks} tasks): "
                  f"correctness {part(a.correct)}; faster than the baseline {part(a.faster)}",
                  highlight=False, soft_wrap=True)  # fmt: skip
    if a.undecided:
        why = ", ".join(f"{k} {v}" for k, v in sorted(a.undecided.items(), key=lambda kv: -kv[1]))
        console.print(f"  faster not compared or undecided: {escape(why)}", highlight=False,
                      soft_wrap=True)  # fmt: skip
    for c in a.disagreements:
        if c.correct is not None and c.correct.value == "disagree":
            console.print(f"  disagrees on correctness: {escape(c.task_id)}: here {c.stage}, "
                          f"published {c.published_status}", highlight=False, soft_wrap=True)  # fmt: skip
        if c.faster is not None and c.faster.value == "disagree":
            here = f"{c.ratio_here:.3f}" if c.ratio_here is not None else "-"
            pub = f"{c.published_ratio:.3f}" if c.published_ratio is not None else "-"
            console.print(f"  disagrees on faster than the baseline: {escape(c.task_id)}: here "
                          f"{c.faster_here} (Tc/Tb {here}), published Tc/Tb {pub}",
                          highlight=False, soft_wrap=True)  # fmt: skip
