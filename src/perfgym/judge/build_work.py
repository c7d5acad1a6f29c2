"""Work done in a candidate's build, outside every clock: the `build_work` flag.

A build is not timed (RLPF times the run), so a program can move work into its compiler: a
C++ `constexpr` table, a Rust `const fn`, template recursion. Red team helper-84 added two
`constexpr` tables taking about 4 s of g++ CPU to the reference of cpp-lcs-length: accepted,
unflagged, 1.26 in 2 of 2 batches. A correct candidate whose build took more CPU than
`BUILD_FACTOR` times the most its task's own builds (baseline, reference) took, and more than
`JudgeConfig.build_work_s` beyond it, is flagged: rewards give it the least speed credit a
correct program can earn (`Verdict.hid_time`), and its timing is degraded, so no decision of
speed reads it (`perfgym optimize` accepted one at 0.67x: red team helper-98). With the default 2 s: the reference builds in
0.3 s of g++ CPU here, helper-84's tables in 4.5 s (flagged), an honest program including
<bits/stdc++.h> in about 1.5-1.8 s (not, on an idle machine). On a loaded or slower one
that honest build took more than the task's own builds plus 2 s (full63, full66), so a C++
build over those bounds is weighed once more, against a build of `HEADER_PROBES` (the whole
standard library, nothing else) made then: it may take the own builds' most plus
`PROBE_FACTOR` times the probe's. Interpreted languages' "builds" run no compiler and are
never flagged. A build's figure is the record of the run that filled the build cache.

A C++ build over the fixed bound is then looked at once more, and that look decides: built
again with g++'s `-ftime-report` (`build_look.phase_look`; the same bytes), it is flagged where
the compiler's own figure for a phase that computes passes its allowance (`PHASE_ALLOWANCES`:
constant expression evaluation, template instantiation, preprocessing). Honest programs fell
to the bounds on CPU seconds: an honest `<bits/stdc++.h>` build beside a constexpr-heavy one
took twice its usual 1.3-1.8 s (full111); programs that use `std::regex` (4.4-5.5 s) or the
usual contest containers (`map`, `priority_queue`, `variant`, ..., 2.5-3.9 s) were flagged
3 of 3 (red teams helper-124, helper-125): their time goes to instantiating and optimising
templates, which the header probe does not do. The phases tell them apart (user seconds here:
constant evaluation 0.00-0.08 s for every honest program, 0.65 s for a 4096-entry table of 100
steps each, 4.8 s for the test's two tables; template instantiation at most 1.75 s). A
phase figure is a share of one build, so a loaded moment that slows the build slows it alike.
The look counts only where the second build gives back the first one's artifact byte for byte;
one that does not, or does not build (a build whose work depends on its moment, `__TIME__`
say), whose compiler's output does not end in its one report, or that forces a loop's
unrolling cannot be checked and is flagged (`UNCHECKED`; `build_look` says how a program was
kept from writing the report). A table under the fixed bound passes unlooked as before (its
one draw); over it, its look flags it: one draw decides, never the better of two (a look drawn
only to clear a flag cleared 6 of 13 tables near the cut: helper-124). Without a look (a language with no phase report, a look that failed), the first
figure is weighed against the header probe built later. Figures are drawn once per candidate
build and kept; a draw that gave none (a sandbox fault) is drawn again next time. A harness
task's folder is built once and keeps its single figure: its own builds compile the same
harness, so an honest candidate's build is near theirs, and twice it stays under
`BUILD_FACTOR` times theirs.

Open: a look costs a build with the phase report (about twice the build's CPU), one per build
over the fixed bound; work done elsewhere in the compiler (the optimiser folding a loop) is
not a phase the look reads beyond a forced unrolling; a table kept under the fixed bound is never looked at (red team
helper-126: ~1 M steps, 1.8-2.0 s of g++, paid 1.26 against the same work at run time's 1.15).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from perfgym.judge.build_look import UNCHECKED, over_allowance
from perfgym.judge.variant import Variant
from perfgym.judge.verdict import Verdict
from perfgym.judge.whole_file import write_whole
from perfgym.run_status import BUILD_WORK
from perfgym.sandbox.base import Sandbox
from perfgym.tasks.task import Language
from perfgym.timing.result import TimingStatus
from perfgym.toolchains import BuildCache, toolchain

#: How many times its task's own builds' CPU a candidate's build may take unflagged.
BUILD_FACTOR = 4.0
#: What an honest program may include at no charge, per language: a program including the
#: whole standard library (`bits/stdc++.h`, common in C++ solutions) builds in about 1.5 s of
#: g++ CPU here, 0.3 s for its task's reference, and 1.8x that on a slower machine: a fixed
#: allowance flagged it (full63, full66). Built only for a build over the other bounds.
HEADER_PROBES = {Language.CPP: "#include <bits/stdc++.h>\nint main() { return 0; }\n"}
#: A candidate's build may take its task's own builds' most plus this many times the probe's
#: build (measured then, on the machine as it is: the two are built at different moments).
PROBE_FACTOR = 1.5


def build_cpu_s(v: Variant | None) -> float | None:
    m = None if v is None else v.build_measurement
    return None if m is None else m.cpu_s


def flag_build_work(verdict: Verdict, candidate: Variant, own: Sequence[Variant | None],
                    allowance_s: float, probe: Callable[[], float | None] | None = None,
                    look: Callable[[], Any] | None = None) -> bool:  # fmt: skip
    """Flag `verdict` BUILD_WORK when the candidate's build CPU passes BUILD_FACTOR times its
    task's own builds' and `allowance_s` beyond them, and then its `look` (drawn only then: the
    compiler's phase figures, `phase_look`) finds a phase over its allowance or the build not
    the same bytes again; without a look (None), when the first figure also passes PROBE_FACTOR
    times the header probe built later (`probe`, drawn only then; None: the first bound alone)
    beyond the own builds. Returns whether it did."""
    mine = build_cpu_s(candidate)
    theirs = [x for x in (build_cpu_s(o) for o in own) if x is not None]
    if mine is None or not theirs:
        return False
    bound = max(BUILD_FACTOR * max(theirs), max(theirs) + allowance_s)
    if mine <= bound:
        return False
    seen = look() if look is not None else None
    why = ""
    if seen == UNCHECKED:
        why = " (built again, it could not be checked: other bytes, no report, or an unrolling)"
    elif isinstance(seen, dict):  # the look decides: one draw, never the better of two
        over = over_allowance(seen)
        if not over:
            return False
        why = f" ({over})"
    else:
        probed = probe() if probe is not None else None
        if probed is not None and mine <= max(theirs) + PROBE_FACTOR * probed:
            return False
    verdict.flags.append(BUILD_WORK)
    if verdict.candidate is not None:
        # Its time is not its own: no decision of speed reads it (an optimiser's acceptance,
        # the metrics), as none reads a timing that hid work (red team helper-98).
        verdict.candidate.status = TimingStatus.DEGRADED
        verdict.candidate.status_reason = (
            f"its build took {mine:.1f} s of CPU{why} against its task's own builds' "
            f"{max(theirs):.1f} s: work done outside every clock"
        )
    return True


def remembered(memo: Path | None, candidate: Variant, name: str,
               draw: Callable[[], Any]) -> Callable[[], Any]:  # fmt: skip
    """`draw` (the header probe's figure, or the second look's: `name`), drawn once
    per candidate build and kept in the folder `memo` (keyed by the build's measurement, which a
    cached build gives back unchanged), so the same build always meets the same bound. Drawn at
    every judgement, a loaded moment's slow probe let the same program through: red team
    helper-101's constexpr table (2.68 s of g++ CPU, the task's builds 0.65 s) was refused
    twice, then accepted by `perfgym optimize` at 0.59x."""
    m = candidate.build_measurement
    if memo is None or m is None:
        return draw
    path = memo / f"{hashlib.sha256(m.model_dump_json().encode()).hexdigest()[:32]}.json"

    def kept() -> dict:
        try:
            got = json.loads(path.read_text())
        except (OSError, ValueError):
            return {}
        return got if isinstance(got, dict) else {}

    def drawn() -> Any:
        known = kept()
        if known.get(name) is not None:
            return known[name]
        got = draw()
        if got is None:  # no figure (a sandbox fault, say): drawn again next time, not kept
            return None
        try:
            memo.mkdir(parents=True, exist_ok=True)
            write_whole(path, json.dumps({**kept(), name: got}).encode())
        except OSError:  # not kept: drawn again next time
            pass
        return got

    return drawn


def header_probe_cpu(language: Language, sandbox: Sandbox) -> float | None:
    """The build CPU of `HEADER_PROBES[language]` now, in a build cache of its own (a cached
    build has no figure); None where the language has no probe or it did not build."""
    source = HEADER_PROBES.get(language)
    if source is None:
        return None
    try:
        with tempfile.TemporaryDirectory(prefix="perfgym-probe-") as root:
            build = toolchain(language).build(sandbox, source, BuildCache.at(root))
    except Exception:  # noqa: BLE001 - no probe: the other bounds decide
        return None
    return None if build.measurement is None else build.measurement.cpu_s
