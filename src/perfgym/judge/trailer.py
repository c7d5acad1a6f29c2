"""The harness end mark: a PerfCodeBench harness's verdict line counts only when a wrapper
around the harness's entry point wrote, after the harness's main returned, a trailer line with
the run's secret nonce (docs/security.md, section 6b).

A harness task links or loads the candidate into the harness's own process, so the candidate
can print the harness's `{"ok": true, ...}` line itself and exit before the harness does. The
wrapper (per language, `trailer_src/`) reads the nonce from a file of the run's work dir and
removes it before any code of the program runs, and writes `PERFGYM_HARNESS_END <nonce>
<state>` only when the harness's main returned normally, <state> `ok` when the program's stdout
is the one the run started with, else `stdout-replaced`.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass, field
from enum import StrEnum
from importlib import resources
from pathlib import Path

from perfgym.judge.whole_file import write_whole
from perfgym.tasks.harness_plan import HarnessPlan
from perfgym.tasks.task import Language

#: The nonce's file in the run's work dir (/tmp), read and removed by the wrapper.
NONCE_FILE = ".perfgym-nonce"
#: The wrapper sources' folder inside the build dir (Go's sits beside the harness: one folder).
WRAP_DIR = ".perfgym"
MARK = "PERFGYM_HARNESS_END"
_C, _PY, _JAVA, _GO = (
    "perfgym_trailer.c",
    "perfgym_trailer.py",
    "PerfgymTrailer.java",
    "0perfgym_trailer.go",
)
#: Python's wrapper runs the solution through these (`--solution`): its own process, plain values.
_PY_SPLIT, _PY_SERVER, _PY_SHIM = (
    "perfgym_split.py",
    "perfgym_solution_server.py",
    "perfgym_solution.py",
)
_SOURCES = (_C, _PY, _JAVA, _GO, _PY_SPLIT, _PY_SERVER, _PY_SHIM)
_C_COMPILERS = re.compile(r"^(gcc|g\+\+|cc|c\+\+|clang|clang\+\+)(-\d+)?$")
_GO_MAIN = re.compile(r"^func main\(\) \{$", re.MULTILINE)
_LINE = re.compile(rf"^{MARK} (\S*) (\S+)$")
#: After a C/C++ harness build (`sh -c _NO_IFUNC OUT COMPILE...`): an executable with an IFUNC
#: relocation fails it. The dynamic linker calls an IFUNC resolver while relocating the
#: program, before any .preinit_array entry, so before the wrapper reads the nonce. No
#: published task links statically (libc's own IFUNCs would be in the executable then) and no
#: published solution uses GCC's function multiversioning (`target_clones`), which makes them.
_NO_IFUNC = (
    '"$@" || exit $?; r=$(readelf -rW -- "$0") || { echo "perfgym: readelf could not list '
    'the relocations of $0" >&2; exit 1; }; case $r in *IRELATIVE*) echo "perfgym: the '
    "program defines an IFUNC (its resolver would run before the harness's end-mark wrapper "
    'reads the nonce): not allowed in a harness task" >&2; exit 1;; esac'
)


@dataclass
class Wrapped:
    """A harness plan with its entry point wrapped (`how`: the language's wrapper), or as
    given with `why` it could not be (`how` empty)."""

    build_argv: list[str] | None
    run_argv: list[str]
    steps: list[str] = field(default_factory=list)  # shell steps after the copies
    how: str = ""
    why: str = ""


def version() -> str:
    """A digest of the wrapper sources (part of a harness build's cache key)."""
    h = hashlib.sha256()
    for name in _SOURCES:
        h.update(_source(name).encode())
    return h.hexdigest()[:12]


def nonce() -> str:
    """A fresh secret for one run."""
    return secrets.token_hex(16)


def _source(name: str) -> str:
    return resources.files("perfgym.judge").joinpath("trailer_src", name).read_text("utf-8")


def install(build_host: Path) -> None:
    """Write the wrapper sources into a variant's build dir (before its build)."""
    (build_host / WRAP_DIR).mkdir(exist_ok=True)
    for name in _SOURCES:
        target = build_host / (name if name == _GO else f"{WRAP_DIR}/{name}")
        # whole: a judge preparing the same variant may be building or running from it
        write_whole(target, resources.files("perfgym.judge").joinpath("trailer_src", name)
                    .read_bytes())  # fmt: skip


def wrap(
    language: Language,
    plan: HarnessPlan,
    build_dir: str,
    harness_dir: Path,
    solution: str | None = None,
) -> Wrapped:
    """`plan`'s build and run with the harness's entry point wrapped for `language`;
    `build_dir`: the build dir as the run sees it; `harness_dir`: the task's harness on the
    host (read for Go, whose harness main is renamed); `solution`: the solution's path as the
    run sees it (Python: the harness reaches it in a process of its own, `--solution`)."""
    same = Wrapped(plan.build_argv, list(plan.run_argv))
    wrap_dir = f"{build_dir}/{WRAP_DIR}"
    build, run = plan.build_argv, plan.run_argv
    if language in (Language.C, Language.CPP):
        if not build or not _C_COMPILERS.match(Path(build[0]).name):
            return _no(same, "the build is not a gcc/g++/clang compile")
        if "-x" in build or "-c" in build or "-o" not in build:
            return _no(same, "the build is not one compile-and-link of named sources")
        argv = [build[0], "-Wl,--wrap=main", f"{wrap_dir}/{_C}", *build[1:]]
        out = build[build.index("-o") + 1] if build.index("-o") + 1 < len(build) else ""
        return Wrapped(["sh", "-c", _NO_IFUNC, out, *argv], list(run), how="c-wrap-main")
    if language is Language.PYTHON:
        for k, arg in enumerate(run[:-1]):
            if re.fullmatch(r"python3?(\.\d+)?", Path(arg).name):
                if run[k + 1].startswith("-"):
                    break
                guard = ["--solution", solution] if solution else []
                argv = [*run[: k + 1], f"{wrap_dir}/{_PY}", *guard, *run[k + 1 :]]
                return Wrapped(build, argv, how="python-runpy")
        return _no(same, "the run is not `python3 HARNESS.py ...`")
    if language is Language.JAVA:
        if not build or Path(build[0]).name != "javac" or not run or Path(run[0]).name != "java":
            return _no(same, "the build is not one javac, or the run not one java")
        main = _java_main_class(run)
        if main is None:
            return _no(same, "the java run names no main class")
        return Wrapped([*build, f"{wrap_dir}/{_JAVA}"],
                       [*run[:main], "PerfgymTrailer", *run[main:]], how="java-main")  # fmt: skip
    if language is Language.GO:
        return _wrap_go(plan, build_dir, harness_dir, same)
    return _no(same, f"no end-mark wrapper for {language.value}")


def _no(same: Wrapped, why: str) -> Wrapped:
    same.why = why
    return same


def _java_main_class(run: list[str]) -> int | None:
    k = 1
    while k < len(run):
        arg = run[k]
        if arg in ("-cp", "-classpath", "--class-path"):
            k += 2
        elif arg in ("-jar", "-m", "--module") or arg.startswith("--source"):
            return None
        elif arg.startswith("-"):
            k += 1
        else:
            return k
    return None


def _wrap_go(plan: HarnessPlan, build_dir: str, harness_dir: Path, same: Wrapped) -> Wrapped:
    """Go: the harness file (copied into the build dir) gets its `func main() {` renamed, and
    the wrapper (in the same dir, as Go wants) joins the `go build` file list."""
    build = plan.build_argv or []
    if "go" not in build or "build" not in build:
        return _no(same, "the build is not `go build`")
    copied = [
        c for c in plan.copies if c.source.suffix == ".go" and c.source.parent.name == "harness"
    ]
    mains = []
    for c in copied:
        host = harness_dir / c.source.name
        text = host.read_text(encoding="utf-8") if host.is_file() else ""
        mains += [c] * len(_GO_MAIN.findall(text))
    if len(mains) != 1:
        return _no(same, "no single `func main() {` line in a harness file copied to the build")
    target = str(mains[0].target)
    files = [k for k, a in enumerate(build) if a.endswith(".go")]
    if not files or target not in build:
        return _no(same, "`go build` does not name the harness file")
    rename = f"sed -i 's/^func main() {{$/func perfgymHarnessMain() {{/' {target}"
    # First of the files: its initialiser runs before any of the solution's. Without cgo: a
    # cgo preamble's C constructor would run at load, before any Go initialiser (no published
    # Go task imports "C"; a program that does fails to build).
    # `env CGO_ENABLED=0` just before `go`: it wins over any setting of the recipe's own.
    go = build.index("go")
    argv = [*build[:go], "env", "CGO_ENABLED=0", *build[go : files[0]], f"{build_dir}/{_GO}",
            *build[files[0] :]]  # fmt: skip
    return Wrapped(argv, list(plan.run_argv), steps=[rename], how="go-main-renamed")


class EndState(StrEnum):
    """The end mark's word for a harness that returned with its stdout untouched; any other
    word (e.g. `stdout-replaced`) says what the wrapper found instead."""

    OK = "ok"


@dataclass
class EndMark:
    """What the trailer says about one run: `found` (the run's nonce), `state` ('ok' or why
    not), the stdout before it (the lines the verdict is read from), and `forged` (a mark
    with another nonce: printed by the program)."""

    found: bool
    state: str = ""
    before: str = ""
    forged: bool = False


def read_end_mark(stdout: str, secret: str) -> EndMark:
    """The run's end mark in `stdout`: its first line with the mark and `secret`; any other
    mark line (another nonce) is forged."""
    lines = stdout.splitlines()
    forged = False
    for k, line in enumerate(lines):
        m = _LINE.match(line.strip())
        if m is None:
            continue
        if m.group(1) != secret:
            forged = True
            continue
        return EndMark(True, m.group(2), "\n".join(lines[:k]), forged)
    return EndMark(False, "", stdout, forged)
