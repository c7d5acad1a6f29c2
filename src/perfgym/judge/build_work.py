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

A build over the fixed bound is looked at once more where the language has a probe: built
again beside a new probe, the two at one moment, each in a build cache of its own
(`side_by_side`), and that look alone decides: flagged where it passes the fixed bound and
PROBE_FACTOR times the probe built beside it. The candidates of one batch build side by side,
and beside a constexpr-heavy build (5-6.5 s of g++ CPU) an honest `<bits/stdc++.h>` build once
took about twice its usual 1.3-1.8 s and passed both bounds against a probe built later on a
quieter machine (full111). At one moment, a load that slows one slows the other. The look is
one draw, never a second chance: drawn only to clear a flag, it cleared 6 of 13 tables near
the cut (red team helper-124); a table near the cut passes the fixed bound ~always, so the look
is its one draw. It counts only where the second build gives back the first one's artifact
byte for byte (a build whose work depends on its moment, `__TIME__` say, cannot be weighed on
another build: `OTHER_BYTES`, the first figure decides against the probe built later). Figures
are drawn once per candidate build and kept; a draw that gave none (a sandbox fault) is drawn
again next time. A harness task's folder is built once and keeps its single figure: its own
builds compile the same harness, so an honest candidate's build is near theirs, and twice it
stays under `BUILD_FACTOR` times theirs.

Open (helper-124): an honest program using `std::regex` builds in 4.4-5.5 s of g++ CPU (its
templates instantiated and optimised, which the header probe does not do) and is flagged,
3 of 3; the compiler's own phase times (`-ftime-report`'s constant expression evaluation:
0.06 s of its 5.8 s, 2.45 s of a table's 2.9 s) would tell the two apart. Looks run one after
another, after the batch's builds: 4 heavy correct candidates cost 46 s of looks beside 29 s
of parallel first builds.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

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
                    second: Callable[[], Any] | None = None) -> bool:  # fmt: skip
    """Flag `verdict` BUILD_WORK when the candidate's build CPU passes BUILD_FACTOR times its
    task's own builds' and `allowance_s` beyond them, and then its `second` look ([its build's
    CPU, a probe's built beside it], drawn only then) passes the same bound and PROBE_FACTOR
    times that probe beyond them; where there is no second look (None: a language without a
    probe, other bytes, a build that failed), the first figure against the header probe built
    later (`probe`, drawn only then; None: the first bound alone). Returns whether it did."""
    mine = build_cpu_s(candidate)
    theirs = [x for x in (build_cpu_s(o) for o in own) if x is not None]
    if mine is None or not theirs:
        return False
    bound = max(BUILD_FACTOR * max(theirs), max(theirs) + allowance_s)

    def over(cpu: float, probed: float | None) -> bool:
        return cpu > bound and (probed is None or cpu > max(theirs) + PROBE_FACTOR * probed)

    if mine <= bound:
        return False
    # One draw decides, never the better of two: the look where there is one (a table near
    # the bound passes the first bound ~always, so the look is its one draw), else the probe.
    looked = _pair(second() if second is not None else None)
    if looked is not None:
        if not over(*looked):
            return False
    elif not over(mine, probe() if probe is not None else None):
        return False
    verdict.flags.append(BUILD_WORK)
    if verdict.candidate is not None:
        # Its time is not its own: no decision of speed reads it (an optimiser's acceptance,
        # the metrics), as none reads a timing that hid work (red team helper-98).
        verdict.candidate.status = TimingStatus.DEGRADED
        again = "" if looked is None else f" ({looked[0]:.1f} s built again beside a probe)"
        verdict.candidate.status_reason = (
            f"its build took {mine:.1f} s of CPU{again} against its task's own builds' "
            f"{max(theirs):.1f} s: work done outside every clock"
        )
    return True


def _pair(looked: Any) -> tuple[float, float] | None:
    """A second look's two figures as `side_by_side` gives them (or its memo keeps them), or
    None where it gave none."""
    if not isinstance(looked, list | tuple):
        return None
    try:
        again, probed = looked
        return float(again), float(probed)
    except (TypeError, ValueError):
        return None


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


#: What `side_by_side` gives for a second build that was not the first one's bytes (kept, so
#: such a build is not built again at every judgement; no figure: the first one decides).
OTHER_BYTES = "other bytes"


def side_by_side(language: Language, sandbox: Sandbox, source: str,
                 artifact: str) -> list[float] | str | None:  # fmt: skip
    """[the build CPU of `source`, of `HEADER_PROBES[language]`], the two built at one moment,
    each in a build cache of its own; `OTHER_BYTES` where `source` built anything but the files
    of `artifact` (its first build's artifact folder) byte for byte; None where the language
    has no probe or either did not build."""
    probe = HEADER_PROBES.get(language)
    if probe is None:
        return None
    try:
        with tempfile.TemporaryDirectory(prefix="perfgym-second-look-") as root:

            def build(text: str, where: str) -> Any:
                return toolchain(language).build(sandbox, text, BuildCache.at(f"{root}/{where}"))

            with ThreadPoolExecutor(2) as pool:
                mine, probed = pool.map(build, (source, probe), ("candidate", "probe"))
            if mine.measurement is None or probed.measurement is None or not mine.artifact_dir:
                return None
            if _tree_digest(Path(mine.artifact_dir)) != _tree_digest(Path(artifact)):
                return OTHER_BYTES
            return [mine.measurement.cpu_s, probed.measurement.cpu_s]
    except Exception:  # noqa: BLE001 - no second look this time: the first figure decides
        return None


def _tree_digest(top: Path) -> str:
    """A digest of every file under `top`: its path below `top` and its bytes."""
    h = hashlib.sha256()
    for path in sorted(p for p in top.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(top)).encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()
