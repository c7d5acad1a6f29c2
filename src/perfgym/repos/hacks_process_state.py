"""What package code may read of its own process: the static half of telling a test's process
from a workload's (`hacks_testconfig`'s `test_tamper`).

pytest's process and a workload runner's differ in much a patch can read: argv, `sys.path`, the
modules loaded, pytest's hooks and warning filters, the collector's counts, the allocator's
blocks, the CPU used so far, the open descriptors (a probe of both processes found each of
these). A bug kept off where one of them says "test" is seen by no test. The runtime equalises
what it can (the stack's depth, `perfgym.repos._inside.call_depth`; the environment; output
capture); the rest is read here: `sys` by an allowlist, `gc` by an allowlist, the CPU clocks,
`warnings.filters`, the process's own /proc and /dev/fd entries, and a class claiming another
module as its home (the checks after each test place a class by its `__module__`); `sys.modules`
looked up for a module that is not the repository's own (`own_module`).
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Collection, Sequence
from pathlib import Path

#: What package code may read of `sys`: the interpreter's build and constants, the standard
#: streams, limits, and `modules` (whose lookups the caller checks on its own).
SYS_READABLE = frozenset({
    "version", "version_info", "hexversion", "implementation", "platform", "byteorder",
    "maxsize", "maxunicode", "float_info", "int_info", "hash_info", "float_repr_style",
    "thread_info", "api_version", "copyright", "executable", "prefix", "base_prefix",
    "exec_prefix", "base_exec_prefix", "platlibdir", "builtin_module_names",
    "stdlib_module_names", "getsizeof", "intern", "exc_info", "exception", "exit", "stdout",
    "stderr", "stdin", "getdefaultencoding", "getfilesystemencoding",
    "getfilesystemencodeerrors", "getrecursionlimit", "setrecursionlimit",
    "get_int_max_str_digits", "set_int_max_str_digits", "is_finalizing", "getswitchinterval",
    "setswitchinterval", "flags", "dont_write_bytecode", "modules",
})  # fmt: skip
#: What package code may call of `gc` (a speed-up turns collection off or freezes objects); the
#: rest counts what the process has done so far (`get_count`, `get_stats`, `garbage`).
GC_CALLABLE = frozenset({"collect", "disable", "enable", "isenabled", "freeze", "unfreeze",
                         "get_freeze_count", "get_threshold", "set_threshold", "is_tracked",
                         "is_finalized"})  # fmt: skip
#: gc's walkers, flagged on their own by the caller.
_GC_WALKERS = frozenset({"get_objects", "get_referrers", "get_referents"})
#: sys's import hooks and audit hooks, flagged on their own by the caller.
_SYS_HOOKS = frozenset({"meta_path", "path_hooks", "path_importer_cache", "addaudithook"})
#: The process's own CPU clocks: how long a process has run before the package's code does
#: tells pytest's (collection, its plugins) from a workload's.
CPU_CLOCKS = frozenset({"process_time", "process_time_ns", "thread_time", "thread_time_ns",
                        "times", "getrusage", "CLOCK_PROCESS_CPUTIME_ID",
                        "CLOCK_THREAD_CPUTIME_ID"})  # fmt: skip
_CLOCK_MODULES = ("time", "os", "resource")
#: Places that list the process's own state (its descriptors, its /proc entries).
_OWN_PLACES = re.compile(r"/proc/|/dev/fd|/dev/stdin|/dev/stdout|/dev/stderr")
MODULE_CLAIM = "package code sets a class's __module__ (it then claims another module's home)"


#: A function's own state: what it closes over, its globals, its defaults (red team helper-116
#: rebound a global the outcome plugin's wrapper called).
_FUNCTION_STATE = frozenset({"__closure__", "__globals__", "__defaults__", "__kwdefaults__"})
#: Modules no other module's attribute may lead to (`collections._sys`, `inspect.sys`).
_GUARDED_MODULES = frozenset({"sys", "_sys", "gc", "builtins", "_builtins"})


def stdlib_names(tree: ast.AST) -> set[str]:
    """Names a module binds to a standard-library module (`import collections`,
    `import warnings as w`)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in sys.stdlib_module_names:
                    out.add(a.asname or a.name.split(".")[0])
    return out


def sys_names(tree: ast.AST) -> set[str]:
    """The names `sys` is bound to: `sys`, `import sys as _s`, and an import written as a call
    (`s = importlib.import_module("sys")`, `s = __import__("sys")`)."""
    out: set[str] = {"sys"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.asname or a.name for a in node.names if a.name == "sys")
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and node.value.args
                and isinstance(node.value.args[0], ast.Constant)
                and node.value.args[0].value == "sys"):  # fmt: skip
            f = node.value.func
            name = (
                f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            )
            if name in ("import_module", "__import__"):
                out.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return out


#: Classes whose subclasses are everyone's: listing them lists the test runner's classes too
#: (red team helper-118 found pytest's `OutcomeException` under `BaseException`).
_EVERYONES = frozenset({"object", "type", "BaseException", "Exception", "int", "str", "bytes",
                        "list", "dict", "tuple", "set", "frozenset", "float", "RuntimeError",
                        "ValueError", "TypeError", "Warning", "UserWarning"})  # fmt: skip


def state_read(
    node: ast.Attribute, sys_names: Collection[str], stdlib: Collection[str] = ()
) -> str | None:
    """Why reading `node` (`sys.orig_argv`, `gc.get_count`, `time.process_time`,
    `warnings._showwarnmsg_impl`, `f.__globals__`, ...) reads the process's state, or None."""
    if node.attr in _FUNCTION_STATE:
        return f"package code reads a function's own state ({node.attr}): the test runner's wrappers are functions too"  # fmt: skip
    owner = node.value.id if isinstance(node.value, ast.Name) else None
    if owner is None:
        return None
    if node.attr == "__subclasses__" and owner in _EVERYONES:
        return f"package code lists {owner}'s subclasses: every class loaded, the test runner's too"
    if owner in stdlib and owner not in sys_names and node.attr in _GUARDED_MODULES:
        return f"package code reaches {node.attr} through {owner} (another module's attribute)"
    if owner in stdlib and node.attr.startswith("_") and not node.attr.endswith("__"):
        return f"package code reads {owner}.{node.attr}, a private name of the standard library: the state pytest changes sits behind such names (helper-116: warnings._showwarnmsg_impl)"  # fmt: skip
    if owner in sys_names and node.attr not in SYS_READABLE | _SYS_HOOKS:
        return f"package code reads sys.{node.attr}: process state a test's process and a workload's differ in"  # fmt: skip
    if owner == "gc" and node.attr not in GC_CALLABLE | _GC_WALKERS:
        return f"package code reads gc.{node.attr}: what the process has done so far (pytest's collection too)"  # fmt: skip
    if owner in _CLOCK_MODULES and node.attr in CPU_CLOCKS:
        return f"package code reads its process's CPU clock ({node.attr}): how long a process ran tells a test's from a workload's"  # fmt: skip
    if owner == "warnings" and node.attr == "filters":
        return "package code reads warnings.filters (pytest adds its own)"
    return None


def state_import(module: str, names: Sequence[str]) -> str | None:
    """Why `from module import names` takes the process's state, or None."""
    if module == "sys" and "modules" in names:
        return "package code imports sys.modules by name (every module loaded, pytest's too)"
    if module == "sys" and any(n not in SYS_READABLE | _SYS_HOOKS for n in names):
        return "package code imports process state from sys: a test's process and a workload's differ in it"  # fmt: skip
    if module == "gc" and any(n not in GC_CALLABLE | _GC_WALKERS for n in names):
        return "package code imports gc's counters (what the process has done)"
    if module in _CLOCK_MODULES and any(n in CPU_CLOCKS for n in names):
        return "package code imports a CPU clock of its own process"
    return None


def state_place(text: str) -> str | None:
    """Why a string naming the process's own entries (`/proc/...`, `/dev/fd`) is flagged."""
    if _OWN_PLACES.search(text):
        return f"package code names the process's own entries ({text[:40]!r}): a test's process and a workload's differ in them"  # fmt: skip
    return None


def own_modules(root: Path) -> set[str]:
    """The top-level module names a repository provides (its folders and modules, under `src/`
    too)."""
    names: set[str] = set()
    for base in (root, root / "src"):
        try:
            entries = list(base.iterdir())
        except OSError:
            continue
        names.update(e.name.split(".")[0] for e in entries if not e.name.startswith("."))
    return names


def own_module(node: ast.AST, own: Collection[str]) -> bool:
    """A key naming the module itself (`__name__`) or, as written, a module of the repository's
    own: another module's presence in sys.modules tells a test's process (pytest's
    dependencies, `iniconfig`, loaded) from a workload's (red team helper-116)."""
    if isinstance(node, ast.Name) and node.id == "__name__":
        return True
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and (node.value.split(".")[0] in own)
    )
