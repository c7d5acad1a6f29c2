"""Twins: candidates of one task that are the same program are judged once, and a candidate
that is the baseline's or the reference's program is not timed again: it has that role's
timing.

Late in GRPO training a group's completions are often one program with different comments, or
the prompt's own baseline handed back; measuring each copy again costs a batch the most time
and buys only noise (two measurements of one program differ by noise alone, and that noise
would become a reward difference between identical answers).

What a twin still gets of its own: its verdict's sample, model, suite, source and extraction
rule. What it shares: every test result, the stage, the timing. Two candidates are twins only
where nothing either can do tells them apart (`twin_key`): in Python, the same compiled module
(bytecode, constants, names and every line number) from a program that names no way to its own
text (files, `inspect`, `traceback`, frames, `exec`...: `READS_ITSELF`); in any other language,
the same text. So a comment buys nothing, and a twin's verdict is one real judgement of its
own program.

A role's copy (equal normalised sources, `perfgym.judge.same_source`, with the task's own
baseline or reference, whose code reads neither its text nor its line numbers) still runs
every correctness test; its timed runs are the role's (measured anyway), whose outputs are
then checked against the workloads' expected outputs as the copy's own would be. A
correctness-only run judges every distinct candidate as before.
"""

from __future__ import annotations

import re
import types
from collections.abc import Sequence

from perfgym.judge.record import Entry
from perfgym.judge.same_source import same_source_roles
from perfgym.judge.verdict import Timing, Verdict
from perfgym.tasks.task import Language, Task

#: On a verdict judged as another candidate's twin (the same program, judged once).
SAME_PROGRAM = "same_program_judged_once"
#: On a candidate's timing taken from the baseline's or the reference's (the same program).
ROLE_TIMING = "timing_of_same_program"


def representatives(task: Task, entries: Sequence[Entry]) -> tuple[list[int], dict[int, int]]:
    """(the indices to judge, twin index → its representative's index). Entries stopped at
    extraction (no source, or one that cannot be run), or whose program may tell its copies
    apart, are each their own (`twin_key`)."""
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
    """What two candidates of `task` must share to be judged once (None: judged alone).

    Python: the compiled module (`compile` of the source's bytes, so a coding cookie counts),
    every code object's bytecode, constants, names and line table: copies differ only in
    comments and layout that keep every line where it was (a trailing comment, lines after
    the last statement). And only a program that cannot read its own text, line numbers or
    frames (`_may_read_itself`): its copies' comments could change what it does. Any other
    language: the same text (trailing whitespace aside); its comment rules are the
    compiler's, and a line number (`__LINE__`) is a comment's business there too.
    """
    if source is None:
        return None
    if task.language is not Language.PYTHON:
        return "text:" + source.rstrip()
    try:
        code = compile(source.encode(), "<candidate>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, UnicodeError, LookupError, RecursionError, MemoryError):
        return None
    if _may_read_itself(code):
        return None
    return "python:" + repr(_code_key(code))


def _code_key(code: types.CodeType) -> tuple[object, ...]:
    consts = tuple(_code_key(c) if isinstance(c, types.CodeType) else (type(c).__name__, repr(c))
                   for c in code.co_consts)  # fmt: skip
    return (code.co_code, consts, code.co_names, code.co_varnames, code.co_freevars,
            code.co_cellvars, code.co_linetable, code.co_exceptiontable, code.co_firstlineno,
            code.co_flags, code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount,
            code.co_name)  # fmt: skip


#: Names (globals, attributes, imported modules) through which a Python program can reach its
#: own text, its line numbers or its frames, or run code it builds: a program that uses any is
#: never a twin.
READS_ITSELF = frozenset(
    [
        "open",
        "exec",
        "eval",
        "compile",
        "getattr",
        "setattr",
        "delattr",
        "hasattr",
        "globals",
        "locals",
        "vars",
        "dir",
        "breakpoint",
        "excepthook",
        "displayhook",
        "unraisablehook",
        "addaudithook",
        "audit",
        "_getframe",
        "exc_info",
        "exception",
        "argv",
        "orig_argv",
        "modules",
        "settrace",
        "setprofile",
        "gettrace",
        "getprofile",
        "f_lineno",
        "f_back",
        "f_code",
        "f_globals",
        "f_locals",
        "tb_lineno",
        "tb_frame",
        "tb_next",
        "lineno",
        "co_firstlineno",
        "co_lines",
        "co_positions",
        "co_linetable",
        "co_lnotab",
        "co_code",
        "co_consts",
        "gi_frame",
        "cr_frame",
        "ag_frame",
        "gi_code",
        "cr_code",
        "os",
        "io",
        "pathlib",
        "builtins",
        "inspect",
        "traceback",
        "linecache",
        "warnings",
        "logging",
        "importlib",
        "ctypes",
        "gc",
        "marshal",
        "dis",
        "code",
        "codeop",
        "runpy",
        "tokenize",
        "ast",
        "mmap",
        "shutil",
        "glob",
        "fileinput",
        "tempfile",
        "subprocess",
        "pty",
        "faulthandler",
        "pdb",
        "bdb",
        "cProfile",
        "profile",
        "trace",
        "tracemalloc",
        "sysconfig",
        "unittest",
        "doctest",
        "zipimport",
        "pkgutil",
        "site",
        "posix",
        "nt",
        "_io",
        "_imp",
        "multiprocessing",
        "concurrent",
        "pickle",
        "copyreg",
        "types",
        "sys_monitoring",
    ]
)
#: Dunder names a program may use and still be a twin (operators, containers, classes).
_PLAIN_DUNDERS = re.compile(
    r"__(name|main|init|new|module|qualname|future|class|doc|slots|post_init|call|enter|exit|"
    r"repr|str|hash|bool|len|iter|next|reversed|contains|getitem|setitem|delitem|missing|"
    r"eq|ne|lt|le|gt|ge|neg|pos|abs|invert|index|int|float|round|floor|ceil|"
    r"[ri]?(add|sub|mul|matmul|truediv|floordiv|mod|divmod|pow|lshift|rshift|and|or|xor))__"
)


def _may_read_itself(code: types.CodeType) -> bool:
    """Whether `code` (any nested code object) names a way to its own text or frames."""
    for name in code.co_names:
        for part in name.split("."):
            if part in READS_ITSELF:
                return True
            if part.startswith("__") and part.endswith("__") and not _PLAIN_DUNDERS.fullmatch(part):
                return True
    return any(_may_read_itself(c) for c in code.co_consts if isinstance(c, types.CodeType))


def twin_verdict(rep: Verdict, entry: Entry) -> Verdict:
    """`rep`'s verdict for its twin `entry`, with what is the twin's own."""
    c, v = entry.candidate, entry.variant
    flags = [*rep.flags, SAME_PROGRAM] if SAME_PROGRAM not in rep.flags else list(rep.flags)
    return rep.model_copy(
        deep=True,
        update={"sample": c.sample, "model": c.model, "suite": c.suite, "source": v.source,
                "extraction_rule": v.extraction_rule, "flags": flags},
    )  # fmt: skip


def role_of(task: Task, entry: Entry, measured: set[str]) -> str | None:
    """The measured role ('baseline' or 'reference') whose program the passing `entry` is, if
    any (the reference first: it is measured in every mode). The role's program is the task's
    own, which reads neither its text nor its line numbers, so equal normalised sources
    (`perfgym.judge.same_source`) are the same program."""
    if not entry.going or entry.variant.source is None:
        return None
    roles = same_source_roles(task, entry.variant.source)
    for role in ("reference", "baseline"):
        if role in roles and role in measured:
            return role
    return None


def role_timing(timing: Timing) -> Timing:
    """A role's timing, handed to a candidate that is its program."""
    flags = timing.flags if ROLE_TIMING in timing.flags else [*timing.flags, ROLE_TIMING]
    return timing.model_copy(deep=True, update={"flags": flags})
