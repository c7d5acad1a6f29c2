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

Open: candidates of one batch build side by side, the probe alone afterwards. Beside a
constexpr-heavy build (5-6.5 s of g++ CPU), an honest `<bits/stdc++.h>` build once took about
twice its usual 1.3-1.8 s and passed both bounds (full111): flagged, paid the floor. A second
build of a flagged candidate made alone, its smaller figure kept (and remembered as the probe
is), would answer it; not built.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

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
                    allowance_s: float,
                    probe: Callable[[], float | None] | None = None) -> bool:  # fmt: skip
    """Flag `verdict` BUILD_WORK when the candidate's build CPU passes BUILD_FACTOR times its
    task's own builds', `allowance_s` beyond them and (where the language has one, built only
    then) PROBE_FACTOR times the header probe's build beyond them; returns whether it did."""
    mine = build_cpu_s(candidate)
    theirs = [x for x in (build_cpu_s(o) for o in own) if x is not None]
    if mine is None or not theirs:
        return False
    bound = max(BUILD_FACTOR * max(theirs), max(theirs) + allowance_s)
    if mine <= bound:
        return False
    probed = probe() if probe is not None else None
    if probed is not None and mine <= max(theirs) + PROBE_FACTOR * probed:
        return False
    verdict.flags.append(BUILD_WORK)
    if verdict.candidate is not None:
        # Its time is not its own: no decision of speed reads it (an optimiser's acceptance,
        # the metrics), as none reads a timing that hid work (red team helper-98).
        verdict.candidate.status = TimingStatus.DEGRADED
        verdict.candidate.status_reason = (
            f"its build took {mine:.1f} s of CPU against its task's own builds' "
            f"{max(theirs):.1f} s: work done outside every clock"
        )
    return True


def remembered(memo: Path | None, candidate: Variant,
               probe: Callable[[], float | None]) -> Callable[[], float | None]:  # fmt: skip
    """`probe`, drawn once per candidate build and kept in the folder `memo` (keyed by the
    build's measurement, which a cached build gives back unchanged), so the same build always
    meets the same bound. Drawn at every judgement, a loaded moment's slow probe let the same
    program through: red team helper-101's constexpr table (2.68 s of g++ CPU, the task's
    builds 0.65 s) was refused twice, then accepted by `perfgym optimize` at 0.59x."""
    m = candidate.build_measurement
    if memo is None or m is None:
        return probe
    path = memo / f"{hashlib.sha256(m.model_dump_json().encode()).hexdigest()[:32]}.json"

    def drawn() -> float | None:
        try:
            got = json.loads(path.read_text())["probe_cpu_s"]
            return None if got is None else float(got)
        except (OSError, ValueError, KeyError, TypeError):
            pass
        got = probe()
        memo.mkdir(parents=True, exist_ok=True)
        write_whole(path, json.dumps({"probe_cpu_s": got}).encode())
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
