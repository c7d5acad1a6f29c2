"""`build_work`'s second look at a C++ build: the compiler's own phase figures, read so that a
program cannot write them.

`phase_look` builds the source again with g++'s `-w -ftime-report` (neither changes the bytes
it builds) in a work folder of its own and reads the report from the compiler's raw standard
error: only the last block that starts with the report's header and ends, as the stream does,
with its `TOTAL` line. g++ prints the report after every diagnostic, so a program's own text
(`#pragma message` prints under `-w`, newlines and all) always comes before it. The build log a
`Build` keeps is no place to read it: capped at 64 KiB and cleared of messages about other
files, it let a program print a report of its own and push g++'s out (red team helper-126: one
`#pragma message` naming `/usr/include/stdio.h` dropped the real report; 120 of them cut it;
both times a table of 16.7 s of constant evaluation was read as 0.01 s and paid 1.26).
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import Any

from perfgym.run_status import Status
from perfgym.sandbox.base import Bind, Sandbox
from perfgym.tasks.task import Language
from perfgym.toolchains import toolchain
from perfgym.toolchains.recipe import BUILD_MOUNT

#: What `phase_look` gives for a build that could not be checked: not the first build's bytes,
#: no build, or no report at the end of its output (kept, so it is not built again at every
#: judgement).
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
#: Recipes whose compiler prints its phase figures, and the flags that make it (no warnings:
#: the report is the output; neither flag changes the bytes it builds).
_PHASE_REPORTS = {"cpp-g++": ("-w", "-ftime-report")}
_HEADER = "Time variable "
_IN_BUILD_DIR = ("sh", "-c", 'cd "$0" && exec "$@"', BUILD_MOUNT)


def phase_look(language: Language, sandbox: Sandbox, source: str, artifact: str) -> Any:
    """The compiler's phase figures ({phase: user seconds}) of `source` built again now, with
    its phase report, in a work folder of its own; `UNCHECKED` where that build failed, gave
    anything but the files of `artifact` (the first build's artifact folder) byte for byte, or
    ended in no report; None where the language's compiler has no report or the sandbox
    failed."""
    recipe = toolchain(language).recipe
    flags = _PHASE_REPORTS.get(recipe.name)
    if flags is None or recipe.build is None:
        return None
    try:
        with tempfile.TemporaryDirectory(prefix="perfgym-look-") as root:
            work = Path(root) / "work"
            work.mkdir()
            work.chmod(0o777)  # written by the run's unprivileged uid
            (work / recipe.source_name).write_bytes(source.encode("utf-8"))
            ex = sandbox.run([*_IN_BUILD_DIR, *recipe.build, *flags], env=recipe.build_env,
                             limits=recipe.build_limits,
                             binds=[Bind(host_path=str(work), sandbox_path=BUILD_MOUNT,
                                         writable=True)])  # fmt: skip
            if ex.status is Status.SANDBOX_ERROR:
                return None
            if ex.status is not Status.OK or ex.stderr_truncated:
                return UNCHECKED
            if _outputs(work, recipe.outputs) != _outputs(Path(artifact), ("*",)):
                return UNCHECKED
            return report_phases(ex.stderr) or UNCHECKED
    except Exception:  # noqa: BLE001 - no look this time: the first figure decides
        return None


def report_phases(stderr: bytes) -> dict[str, float] | None:
    """{phase: user seconds} of the `-ftime-report` block that ends `stderr`, or None where the
    stream does not end in one (from its last header to its `TOTAL` line, nothing after)."""
    lines = stderr.decode("utf-8", errors="replace").rstrip("\n").split("\n")
    heads = [i for i, line in enumerate(lines) if line.startswith(_HEADER)]
    if not heads or not lines[-1].lstrip().startswith("TOTAL"):
        return None
    phases: dict[str, float] = {}
    for line in lines[heads[-1] + 1 : -1]:
        name, colon, figures = line.partition(":")
        usr = figures.split()
        if not colon or not usr:
            return None  # not a line of the report
        try:
            phases[name.strip()] = float(usr[0])
        except ValueError:
            return None
    return phases


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


def _outputs(folder: Path, patterns: tuple[str, ...]) -> dict[str, str]:
    """{file name: sha256} of the regular files in `folder` matching `patterns`."""
    found = {}
    for pattern in patterns:
        for path in folder.glob(pattern):
            if path.is_file() and not path.is_symlink():
                found[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found
