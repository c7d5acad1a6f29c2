"""`build_work`'s second look at a C++ build: the compiler's own phase figures, read so that a
program cannot write them.

`phase_look` builds the source again in a work folder of its own, in three steps, and reads the
report of the middle one only: `g++ -E` (the preprocessed source, for `forced_unrolling`),
`g++ -w -ftime-report -S` (the compiler proper alone: it prints its report after every
diagnostic, and no assembler or linker runs after it in that step) and the link of its
assembly (its output thrown away; the bytes it builds compared with the first build's). The
report is the block from its header to the `TOTAL` line that ends that step's raw standard
error, and there must be exactly one header. Read from the build log a `Build` keeps (capped at
64 KiB, cleared of messages about other files), a program printed a report of its own and
pushed g++'s out (red team helper-126: one `#pragma message` naming `/usr/include/stdio.h`
dropped the real report, 120 of them cut it: a 16.7 s table read as 0.01 s, paid 1.26); read
from the whole build's output, the linker printed one after it (red team helper-127: a
`.gnu.warning` section holding a forged report; and glibc's own warning for an honest `tmpnam`
left the report not the last thing said: flagged, 0.15 against 1.26).

Folding is the optimiser's work, in no phase the look reads: helper-127's `#pragma GCC unroll
65534` on a table's loops made g++ unroll them whole and fold 4096 x 300 steps into constants
(6.4 s of "phase opt and generate"; paid 1.26 against the same source without it's 1.154). A
`#pragma GCC unroll` past `MAX_UNROLL` in the program's own preprocessed text (where a macro
cannot hide it) makes a build over the fixed bound unchecked.
"""

from __future__ import annotations

import hashlib
import re
import shlex
import tempfile
from pathlib import Path
from typing import Any

from perfgym.run_status import Status
from perfgym.sandbox.base import Bind, Sandbox
from perfgym.tasks.task import Language
from perfgym.toolchains import toolchain
from perfgym.toolchains.recipe import BUILD_MOUNT

#: What `phase_look` gives for a build that could not be checked: not the first build's bytes,
#: no build, a forced unrolling, or no single report at the end of its compiler's output (kept,
#: so it is not built again at every judgement).
UNCHECKED = "unchecked"
#: What a phase of one build may take (g++'s `-ftime-report`, user seconds) before the build is
#: said to compute: every honest program measured here took at most 0.08 s of constant
#: evaluation (a table of 4096 entries of 100 steps each took 0.65 s), 1.75 s of template
#: instantiation (red team helper-126's heaviest honest program; `<bits/stdc++.h>` alone 0.7 s)
#: and 0.2 s of preprocessing; a busy machine slows a phase ~2x.
PHASE_ALLOWANCES = {
    "constant expression evaluation": 0.5,
    "template instantiation": 4.0,
    "preprocessing": 1.0,
}
#: The build each recipe's look checks, and its three steps: preprocess; compile alone with the
#: report (no warnings: the report is all it says); link the assembly, silently. A recipe whose
#: build is not the one named here gets no look.
_LOOKS = {
    "cpp-g++": (
        ("g++", "-O2", "-std=c++17", "-o", "main", "main.cpp"),
        ("g++", "-O2", "-std=c++17", "-E", "-o", "main.ii", "main.cpp"),
        ("g++", "-O2", "-std=c++17", "-w", "-ftime-report", "-S", "-o", "main.s", "main.cpp"),
        ("g++", "-O2", "-std=c++17", "-o", "main", "main.s"),
    )
}
_HEADER = "Time variable "
#: The most iterations a program may ask g++ to unroll a loop by (`#pragma GCC unroll N`) in a
#: build over the fixed bound: honest hints are a handful (g++ peels at most 16 on its own).
MAX_UNROLL = 64
_UNROLL = re.compile(rb"^\s*#\s*pragma\s+GCC\s+unroll\s+(\S+)")
_LINE_MARK = re.compile(rb'^# \d+ "([^"]*)"')


def phase_look(language: Language, sandbox: Sandbox, source: str, artifact: str) -> Any:
    """The compiler's phase figures ({phase: user seconds}) of `source` built again now in a
    work folder of its own; `UNCHECKED` where that build failed, gave anything but the files of
    `artifact` (the first build's artifact folder) byte for byte, forced a loop's unrolling past
    `MAX_UNROLL`, or its compiler's output did not end in its one report; None where the
    language has no look or the sandbox failed."""
    recipe = toolchain(language).recipe
    steps = _LOOKS.get(recipe.name)
    if steps is None or recipe.build != steps[0] or not Path(artifact).is_dir():
        return None  # no look (a first build trimmed from its cache since: nothing to compare)
    _, preprocess, report, link = (shlex.join(step) for step in steps)
    script = f'cd "$0" && {preprocess} 2>/dev/null && {report} && {link} >/dev/null 2>&1'
    try:
        with tempfile.TemporaryDirectory(prefix="perfgym-look-") as root:
            work = Path(root) / "work"
            work.mkdir()
            work.chmod(0o777)  # written by the run's unprivileged uid
            (work / recipe.source_name).write_bytes(source.encode("utf-8"))
            ex = sandbox.run(["sh", "-c", script, BUILD_MOUNT], env=recipe.build_env,
                             limits=recipe.build_limits,
                             binds=[Bind(host_path=str(work), sandbox_path=BUILD_MOUNT,
                                         writable=True)])  # fmt: skip
            if ex.status is Status.SANDBOX_ERROR:
                return None
            if ex.status is not Status.OK or ex.stderr_truncated:
                return UNCHECKED
            if _outputs(work, recipe.outputs) != _outputs(Path(artifact), ("*",)):
                return UNCHECKED
            if forced_unrolling(_regular(work / "main.ii"), recipe.source_name):
                return UNCHECKED
            return report_phases(ex.stderr) or UNCHECKED
    except Exception:  # noqa: BLE001 - no look this time: the first figure decides
        return None


def report_phases(stderr: bytes) -> dict[str, float] | None:
    """{phase: user seconds} of the one `-ftime-report` block that ends `stderr`, or None where
    the stream holds none, more than one header, or anything after its `TOTAL` line."""
    lines = stderr.decode("utf-8", errors="replace").rstrip("\n").split("\n")
    heads = [i for i, line in enumerate(lines) if _HEADER in line]
    if len(heads) != 1 or not lines[heads[0]].startswith(_HEADER):
        return None
    if not lines[-1].lstrip().startswith("TOTAL"):
        return None
    phases: dict[str, float] = {}
    for line in lines[heads[0] + 1 : -1]:
        name, colon, figures = line.partition(":")
        usr = figures.split()
        if not colon or not usr:
            return None  # not a line of the report
        try:
            phases[name.strip()] = float(usr[0])
        except ValueError:
            return None
    return phases


def forced_unrolling(preprocessed: bytes, source_name: str) -> bool:
    """Whether the program's own lines of its preprocessed text (`g++ -E`, line markers kept)
    ask g++ to unroll a loop more than `MAX_UNROLL` times, or by a count it does not spell."""
    own = True
    for line in preprocessed.splitlines():
        mark = _LINE_MARK.match(line)
        if mark is not None:
            own = mark.group(1).decode(errors="replace") == source_name
            continue
        hint = _UNROLL.match(line) if own else None
        if hint is not None and (not hint.group(1).isdigit() or int(hint.group(1)) > MAX_UNROLL):
            return True
    return False


def over_allowance(phases: dict) -> str:
    """The first of `PHASE_ALLOWANCES` a look's phase figures pass, said ('' where none)."""
    for phase, allowed in PHASE_ALLOWANCES.items():
        try:
            took = float(phases.get(phase, 0.0))
        except (TypeError, ValueError):
            return f"{phase}: an unreadable figure"
        if took > allowed:
            return f"{phase} {took:.2f} s, over {allowed:g} s"
    return ""


def _regular(path: Path) -> bytes:
    """The bytes of `path` where it is a regular file (not a link the run planted), else b''."""
    return path.read_bytes() if path.is_file() and not path.is_symlink() else b""


def _outputs(folder: Path, patterns: tuple[str, ...]) -> dict[str, str]:
    """{file name: sha256} of the regular files in `folder` matching `patterns`."""
    found = {}
    for pattern in patterns:
        for path in folder.glob(pattern):
            if path.is_file() and not path.is_symlink():
                found[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found
