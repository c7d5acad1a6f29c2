"""The `hidden-draws` probe: does the task's generator give hidden workloads a program could not
have learnt? Training and optimisation decide on inputs drawn from the generator with a secret
seed (`perfgym.judge.hidden`); a generator that maps its 2^31 seeds onto a handful of inputs
hands a program every hidden input it will meet. Red team helper-99: a generator seeded with
`Random(seed % 4)` passed every other probe, and a program holding the answers of its 8 possible
workload inputs (wrong on any other) scored RLPF 1.26 at 12-17x, as the reference does.

No program is judged: the probe draws `DRAWS` hidden inputs of each generated workload under
`DRAWS` secrets and counts the distinct ones (whitespace aside). Real seeds collide among ten
draws with odds of about 2e-8, so one repeat is a finding; a generator with 16 possible inputs
repeats one with odds of 0.97, one with 1,000 only with odds of 0.04 a workload (helper-101's
`Random(seed % 1000)` passed two audits of three), and inputs that differ only where the
program may look away (a value it ignores) pass: a screen for careless generators, not proof.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from perfgym.audit.context import AuditContext, ProbeRun
from perfgym.audit.registry import Probe, register_probe
from perfgym.audit.results import Outcome, ProbeKind, ProbeResult, Severity
from perfgym.judge.hidden import fresh_seed, hidden_cases
from perfgym.tasks.generate import materialize_all
from perfgym.tasks.task import TestCase

G = ProbeKind.GAMEABILITY
NAME = "hidden-draws"
#: Hidden inputs drawn of each generated workload, each under a secret of its own.
DRAWS = 10
_INTEGER = re.compile(r"[+-]?[0-9]+")


def _secrets() -> list[int]:
    """Fresh secrets, as a training batch draws them: fixed ones would let a generator know
    the audit's seeds (they are public) and give those alone inputs of their own."""
    return [fresh_seed() for _ in range(DRAWS)]


def _token(t: str) -> str:
    """An integer token as its value reads (no leading zeros, no '+'); anything else as is."""
    return str(int(t)) if _INTEGER.fullmatch(t) else t


def _digest(case: TestCase) -> str:
    """An input's identity, its whitespace and integers' spelling aside: separators (red team
    helper-101) or leading zeros (helper-102) drawn apart from the numbers made four real
    inputs ten distinct byte strings."""
    text = " ".join(_token(t) for t in (case.stdin or "").split())
    return hashlib.sha256(f"{text}\0{case.args!r}".encode("utf-8", "surrogatepass")).hexdigest()


def _assess(ctx: AuditContext, _runs: Sequence[ProbeRun]) -> ProbeResult:
    task = ctx.task
    drawn: list[TestCase] = []
    which: list[int] = []  # the generated workload each draw stands for (hidden_cases' order)
    for secret in _secrets():
        cases, why = hidden_cases(task, secret)
        if not cases:
            return ProbeResult(probe=NAME, kind=G, outcome=Outcome.NOT_APPLICABLE,
                               severity=Severity.INFO, detail=f"no hidden workloads: {why}")  # fmt: skip
        drawn += cases
        which += range(len(cases))
    drawn = materialize_all(task, drawn)
    visible = {_digest(c) for c in materialize_all(task, [*task.tests, *task.workloads])}
    per_workload: dict[int, list[str]] = {}
    sizes: dict[int, int | None] = {}
    for j, case in zip(which, drawn, strict=True):
        per_workload.setdefault(j, []).append(_digest(case))
        sizes[j] = case.size
    fewest = min(len(set(d)) for d in per_workload.values())
    seen = sum(d in visible for digests in per_workload.values() for d in digests)
    figures = {"draws": DRAWS, "workloads": len(per_workload), "fewest_distinct": fewest,
               "draws_equal_to_a_visible_input": seen}  # fmt: skip
    if fewest < DRAWS or seen:
        j, digests = min(per_workload.items(), key=lambda kv: len(set(kv[1])))
        size = sizes[j]
        detail = (f"the generator gave {len(set(digests))} distinct input(s) in {DRAWS} hidden "
                  f"draws at size {size}" + (f", and {seen} draw(s) equal to a visible input"
                  if seen else "") + ": a program can hold the answer to every hidden input "
                  "(it draws from too few seeds)")  # fmt: skip
        return ProbeResult(probe=NAME, kind=G, outcome=Outcome.WEAK, severity=Severity.HIGH,
                           detail=detail, figures=figures)  # fmt: skip
    return ProbeResult(probe=NAME, kind=G, outcome=Outcome.SOUND, severity=Severity.NONE,
                       detail=f"{DRAWS} hidden draws of each of {len(per_workload)} workload(s), "
                       "all distinct and none a visible input", figures=figures)  # fmt: skip


@register_probe(NAME, G)
def hidden_draws() -> Probe:
    return Probe(NAME, G, f"{DRAWS} hidden inputs of each workload, drawn under secrets of their "
                 "own: none repeats, none is a visible input (else they can be memorised).",
                 _assess, writes_programs=False)  # fmt: skip
