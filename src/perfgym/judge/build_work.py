"""Work done in a candidate's build, outside every clock: the `build_work` flag.

A build is not timed (RLPF times the run), so a program can move work into its compiler: a
C++ `constexpr` table, a Rust `const fn`, template recursion. Red team helper-84 added two
`constexpr` tables taking about 4 s of g++ CPU to the reference of cpp-lcs-length: accepted,
unflagged, 1.26 in 2 of 2 batches. A correct candidate whose build took more CPU than
`BUILD_FACTOR` times the most its task's own builds (baseline, reference) took, and more than
`JudgeConfig.build_work_s` beyond it, is flagged: rewards give it the least speed credit a
correct program can earn (`Verdict.hid_time`). With the default 2 s: the reference builds in
0.3 s of g++ CPU here, helper-84's tables in 4.5 s (flagged), an honest program including
<bits/stdc++.h> in about 1 s (not). Interpreted languages' "builds" run no compiler and are
never flagged. A build's figure is the record of the run that filled the build cache.
"""

from __future__ import annotations

from collections.abc import Sequence

from perfgym.judge.variant import Variant
from perfgym.judge.verdict import Verdict
from perfgym.run_status import BUILD_WORK

#: How many times its task's own builds' CPU a candidate's build may take unflagged.
BUILD_FACTOR = 4.0


def build_cpu_s(v: Variant | None) -> float | None:
    m = None if v is None else v.build_measurement
    return None if m is None else m.cpu_s


def flag_build_work(verdict: Verdict, candidate: Variant, own: Sequence[Variant | None],
                    allowance_s: float) -> bool:  # fmt: skip
    """Flag `verdict` BUILD_WORK when the candidate's build CPU passes BUILD_FACTOR times its task's own builds' and `allowance_s` beyond them;
    returns whether it did."""
    mine = build_cpu_s(candidate)
    theirs = [x for x in (build_cpu_s(o) for o in own) if x is not None]
    if mine is None or not theirs:
        return False
    bound = max(BUILD_FACTOR * max(theirs), max(theirs) + allowance_s)
    if mine <= bound:
        return False
    verdict.flags.append(BUILD_WORK)
    return True
