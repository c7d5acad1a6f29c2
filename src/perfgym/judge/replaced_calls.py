"""A compiled harness task's candidate that takes over a library call its harness makes.

A C, C++, Rust or CUDA solution is linked into one binary with the task's harness. A function
it defines under the name of one the harness calls from a shared library (`clock_gettime`,
`steady_clock::now`, `printf`, ...) takes the harness's calls at link time, before the library
is searched: the solution then says how long it took, or rewrites the line the harness
prints. Red team helper-54 hid a slow third of c_popcount_sum's work behind its own
`clock_gettime` and, paid what the sandbox's clocks confirm (`perfgym.judge.paid_saving`),
still earned 1.134 against its honest twin's 1.018; helper-55 did the same through `printf`
(rewriting the harness's `elapsed_ns`), through a timer typed as data and behind four million
symbols.

So the builds' ELF files are read (in Python, bounds-checked: they are the untrusted build's
output). The names each of the task's own solutions' builds imports from a shared library (the
undefined symbols of their dynamic symbol tables: the harness's calls, which they share) are
the harness's. A candidate's build that defines one of them where the link binds another
object's calls to it (a global or weak symbol, or a hidden one, which the linker writes as a
local after its unnamed `FILE` symbol) has taken the harness's call, whatever it still
imports; so has a strong definition of a name they all define weak (the harness's inline
functions and template instantiations, which the link replaces with a strong one); and so has
one the link exported for a shared library that calls that name itself (libstdc++'s
`steady_clock::now` calls `clock_gettime`, its `operator new` calls `malloc`: helper-58), or
that such a library defines and calls itself through its own relocations (its sized
`operator delete` calls the unsized one: helper-59), unless both the library's definition
and the build's are weak (an inline copy, as an honest build emits one). helper-56 kept the
import beside its own definition with `.symver`
(`clock_gettime@GLIBC_2.2.5`), replaced C++'s `std::ostream::_M_insert<long long>` and forged a
second dynamic symbol table. Its verdict is flagged `harness_call_replaced`, one of
`run_status.CLOCK_CHEAT_FLAGS`: its timing is degraded and every reward scores it as a program
that hid time. So is a build whose symbol tables cannot be read as the linker writes them (two
of one kind, more symbols than `MAX_SYMBOLS`, a name on more than `MAX_SAME_NAME` entries). A
static helper of the same name (in its source file's `FILE` group) takes no one's calls and is
not flagged. An allocator of the solution's own (`malloc`, `operator new`) is: the harness
calls it after its input exists, outside its clock.

So is one that imports a call that changes what the harness's own library calls do
(`PROCESS_HOOKS`: glibc's printf extensions, the run-time look-ups; helper-61). The libraries
read are those a build loads, transitively (libc brings the dynamic loader).

Not seen: builds linked statically (nothing imported to compare), and code that rewrites the
harness's calls at run time (its GOT or its code); what those hide is still paid only as far
as the witnesses confirm it.
"""

from __future__ import annotations

import functools
import mmap
import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfgym.judge.elf_symbols import (
    _ENTRY,
    _GLOBAL,
    _LOCAL,
    _SHT_SYMTAB,
    _STT_FILE,
    _STT_SECTION,
    _UNIQUE,
    _UNNAMED_FILE,
    _WEAK,
    HARNESS_OBJECTS,
    MAX_SAME_NAME,
    MAX_SYMBOLS,
    Unreadable,
    _dynamic_definitions,
    _each,
    _needed,
    _read,
    _self_bound,
    _strong_dynamic_definitions,
    _undefined_dynamic,
    _weak_definitions,
    elf_files,
)
from perfgym.judge.verdict import TimingStatus, Verdict

__all__ = ["CALL_REPLACED", "HARNESS_OBJECTS", "PROCESS_HOOKS", "OwnNames", "Unreadable",
           "exported", "flag_replaced_calls", "harness_weak", "imported", "libraries_call",
           "libraries_bind_themselves", "library_vtables", "loaded_with", "own_names",
           "taken_over", "weak_defined"]  # fmt: skip

#: The verdict flag (in `perfgym.run_status.CLOCK_CHEAT_FLAGS`).
CALL_REPLACED = "harness_call_replaced"


#: Library calls that change what the harness's own calls do, process-wide: glibc's printf
#: extensions (helper-61 registered a `%d` of its own, and the harness's `%lld` printed a
#: smaller elapsed_ns: RLPF 1.004 against its twin's 0.964 in C, 7 of 7 rounds), and the run-time
#: look-ups that reach those and any other function without importing it. A candidate's build
#: that imports one no own build imports is flagged.
PROCESS_HOOKS = frozenset({"register_printf_specifier", "register_printf_function",
                           "register_printf_modifier", "register_printf_type", "dlsym", "dlvsym",
                           "dlopen", "dlmopen"})  # fmt: skip


@dataclass(frozen=True)
class OwnNames:
    """What one of the task's own builds says of the harness's calls: the names it imports
    from shared libraries; the names it defines weak (the template instantiations and inline
    functions a harness's source emits: `std::vector<uint32_t>`'s members, a heap's
    `std::__adjust_heap`), which a strong definition elsewhere in the link replaces, narrowed
    to what the harness's objects define weak where it was also compiled alone
    (`HARNESS_OBJECTS`: a `std::sort` both own solutions instantiate is theirs); and the names
    its dynamic symbol table defines (`stdout`: what the link exports for the libraries)."""

    imports: frozenset[str]
    weak: frozenset[str]
    harness_weak: frozenset[str] | None = None
    exports: frozenset[str] = frozenset()


def imported(root: Path) -> frozenset[str]:
    """The names the ELF files under `root` import from shared libraries (the undefined
    symbols of their dynamic symbol tables). Read of the task's own builds."""
    names: set[str] = set()
    for path in elf_files(root):
        try:
            names |= _read(path, _undefined_dynamic)
        except Unreadable:
            continue
    return frozenset(names)


def weak_defined(root: Path) -> frozenset[str]:
    """The names the ELF files under `root` define weak (read of the task's own builds)."""
    return _each(elf_files(root), _weak_definitions)


def harness_weak(root: Path) -> frozenset[str] | None:
    """What the harness's objects in `root / HARNESS_OBJECTS` define weak; None where they
    were not all compiled."""
    objects = root / HARNESS_OBJECTS
    if not (objects / ".done").is_file():
        return None
    files = sorted(p for p in objects.glob("*.o") if p.is_file() and not p.is_symlink())
    return _each(files, _weak_definitions)


def exported(root: Path, strong: bool = False) -> frozenset[str]:
    """The names the ELF files under `root` define in their dynamic symbol tables (of a
    candidate's build: code only, not the data objects a link copies from a library); only
    the global and unique ones where `strong`."""
    return _each(elf_files(root), _strong_dynamic_definitions if strong else _dynamic_definitions)


#: Where the shared libraries a build names (DT_NEEDED) are looked for.
LIBRARY_DIRS = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
                "/lib", "/usr/lib", "/usr/local/cuda/lib64")  # fmt: skip


def libraries_call(root: Path) -> frozenset[str]:
    """What the shared libraries the ELF files under `root` need (DT_NEEDED, found in
    LIBRARY_DIRS) import themselves: the calls of theirs the executable's definition of that
    name takes (libstdc++'s `clock_gettime` behind `steady_clock::now`, its `malloc` behind
    `operator new`)."""
    names: set[str] = set()
    for lib in _loaded_under(root):
        names |= {n.split("@", 1)[0] for n in _of_library(lib, _undefined_dynamic)}
    return frozenset(names)


def _loaded_under(root: Path) -> list[str]:
    """The libraries the ELF files under `root` load (`loaded_with` their DT_NEEDED)."""
    libs: list[str] = []
    for path in elf_files(root):
        try:
            needed = _read(path, _needed)
        except Unreadable:
            continue
        libs += [lib for lib in loaded_with(needed) if lib not in libs]
    return libs


#: Libraries followed from one file's DT_NEEDED, at most (libstdc++ brings libm, libc,
#: libgcc_s and, through libc, the dynamic loader: a handful).
MAX_LIBRARIES = 64


def loaded_with(needed: Iterable[str]) -> list[str]:
    """The libraries a file with these DT_NEEDED names loads: them and theirs, transitively
    (helper-61: the dynamic loader, which libc needs, calls its own `_dl_catch_exception`
    through its PLT, and a program's definition took those calls)."""
    seen: list[str] = []
    todo = sorted(set(needed))
    while todo and len(seen) < MAX_LIBRARIES:
        lib = todo.pop(0)
        if lib in seen:
            continue
        seen.append(lib)
        todo += sorted(_of_library(lib, _needed) - set(seen))
    return seen


@functools.lru_cache(maxsize=256)
def _of_library(name: str, what: Callable[[mmap.mmap, list[tuple[int, ...]]], set[str]]
                ) -> frozenset[str]:  # fmt: skip
    """`what` read of the library `name` (found in LIBRARY_DIRS; nothing where it is not, or
    cannot be read), once per process."""
    path = _library_path(name)
    if path is None:
        return frozenset()
    try:
        return frozenset(_read(path, what))
    except Unreadable:
        return frozenset()


def libraries_bind_themselves(root: Path) -> tuple[frozenset[str], frozenset[str]]:
    """The code names the shared libraries the ELF files under `root` need define themselves
    and still call through their own relocations (PLT or GOT, so the loader binds them to an
    executable's definition first): (those they define global, those they define weak).
    libstdc++'s sized `operator delete` calls its unsized one this way (helper-59); its
    `std::ctype<char>::do_widen`, an inline member, is one of the weak ones, and an honest
    C++ build defines it weak too."""
    strong: set[str] = set()
    weak: set[str] = set()
    for lib in _loaded_under(root):
        s, w = _library_self_bound(lib)
        strong |= s
        weak |= w
    return frozenset(strong), frozenset(weak - strong)


def _library_self_bound(name: str) -> tuple[frozenset[str], frozenset[str]]:
    """(global, weak) names of code the library `name` defines and calls through its own
    relocations."""
    bound = _of_library(name, _self_bound)
    strong = frozenset(n[2:] for n in bound if n.startswith("G:"))
    return strong, frozenset(n[2:] for n in bound if n.startswith("W:"))


def library_vtables(name: str) -> frozenset[str]:
    """The weak vtables the library `name` defines and reaches through its own GOT (an object
    it constructs takes the program's copy)."""
    return frozenset(n[2:] for n in _of_library(name, _self_bound) if n.startswith("V:"))


def _library_path(name: str) -> Path | None:
    if "/" in name or not name:
        return None
    for d in LIBRARY_DIRS:
        path = Path(d) / name
        if path.is_file():
            return path.resolve()
    return None


def taken_over(root: Path, names: frozenset[str],
               weak: frozenset[str] = frozenset()) -> tuple[frozenset[str], str]:  # fmt: skip
    """Which of `names` (imported by the task's own builds) an ELF file under `root` defines
    where other objects' calls bind to it, and which of `weak` (defined weak by them) it
    defines strong, so that the link keeps its definition; and '' or why a file's symbol
    tables could not be read as a linker writes them. Each name is looked up in the string
    tables, then the entries naming it: no walk of every symbol (a build can write millions)."""
    wanted = [(n.encode(), False) for n in sorted(names) if n]
    wanted += [(n.encode(), True) for n in sorted(weak - names) if n]
    found: set[str] = set()
    for path in elf_files(root):
        try:
            found |= _read(path, lambda data, tables: _taking(data, tables, wanted))
        except Unreadable as exc:
            return frozenset(found), f"{path.name}: {exc}"
    return frozenset(found), ""


def _taking(data: mmap.mmap, tables: list[tuple[int, ...]],
            wanted: list[tuple[bytes, bool]]) -> set[str]:  # fmt: skip
    """The names of `wanted` the file defines where calls bind (those marked True: strong
    only), in its static symbol table (every symbol the link wrote), or its dynamic one where
    it has no static one (stripped)."""
    static = [t for t in tables if t[0] == _SHT_SYMTAB]
    kind, offset, length, str_off, str_len, first_global = (static or tables)[0]
    localised = _localised_from(data, offset, first_global) if kind == _SHT_SYMTAB else 0
    found = set()
    for name, strong in wanted:
        for at_name in _string_offsets(data, str_off, str_len, name):
            if _binds(data, offset, length, at_name, localised, strong):
                found.add(name.decode("utf-8", "replace"))
                break
    return found


def _localised_from(data: mmap.mmap, offset: int, first_global: int) -> int:
    """The index of the linker's unnamed FILE symbol among the locals, after which the
    globals it made local (hidden) are written; `first_global` where there is none."""
    end = offset + min(first_global, MAX_SYMBOLS) * _ENTRY
    at = data.rfind(_UNNAMED_FILE, offset + _ENTRY, end)
    for _ in range(MAX_SAME_NAME):
        if at < 0:
            break
        if (at - offset) % _ENTRY == 0:
            return (at - offset) // _ENTRY
        at = data.rfind(_UNNAMED_FILE, offset + _ENTRY, at + len(_UNNAMED_FILE) - 1)
    else:
        raise Unreadable("its unnamed FILE symbols cannot be told apart")
    return first_global


def _string_offsets(data: mmap.mmap, str_off: int, str_len: int, name: bytes) -> Iterator[int]:
    """Offsets in a string table at which `name` reads (it may end a longer string: the
    linker shares tails, "clock_gettime" inside "__clock_gettime"), alone or versioned: a
    definition `clock_gettime@@V` (`.symver`) binds the harness's unversioned calls, and the
    static symbol table spells it with its version (helper-57)."""
    end, seen = str_off + str_len, 0
    for needle in (name + b"\0", name + b"@"):
        at = data.find(needle, str_off, end)
        while at >= 0:
            seen += 1
            if seen > MAX_SAME_NAME:
                raise Unreadable(f"{name.decode('utf-8', 'replace')!r} in its strings over "
                                 f"{MAX_SAME_NAME} times")  # fmt: skip
            yield at - str_off
            at = data.find(needle, at + 1, end)


def _binds(data: mmap.mmap, offset: int, length: int, at_name: int, localised: int,
           strong: bool = False) -> bool:  # fmt: skip
    """Whether an entry of the table naming `at_name` is a definition other objects' calls
    bind to: global, weak (not where `strong`) or unique, or a local after the linker's
    unnamed FILE symbol (a hidden global; a hidden weak one of the harness's would have lost
    to the harness's own, linked first)."""
    key, end = at_name.to_bytes(4, "little"), offset + length
    at = data.find(key, offset + _ENTRY, end)
    hits = 0
    while at >= 0:
        hits += 1
        if hits > MAX_SAME_NAME * 16:
            raise Unreadable("a name's offset fills its symbol table")
        if (at - offset) % _ENTRY == 0 and at + _ENTRY <= end:
            _name, info, _other, shndx = struct.unpack_from("<IBBH", data, at)
            binding, kind = info >> 4, info & 0xF
            index = (at - offset) // _ENTRY
            binding_takes = (_GLOBAL, _UNIQUE) if strong else (_GLOBAL, _WEAK, _UNIQUE)
            takes = binding in binding_takes or (binding == _LOCAL and index > localised)
            if shndx != 0 and kind not in (_STT_SECTION, _STT_FILE) and takes:
                return True
            at = data.find(key, at + _ENTRY, end)
        else:
            at = data.find(key, at + 1, end)
    return False


def own_names(variant: Any) -> OwnNames:
    """What a task's own solution's build imports and defines weak, read once per variant
    (`Variant.own_names`)."""
    if variant.own_names is None:
        root = Path(variant.build_dir)
        variant.own_names = OwnNames(imported(root), weak_defined(root), harness_weak(root),
                                     exported(root))  # fmt: skip
    return variant.own_names


def flag_replaced_calls(verdict: Verdict, build_dir: str, own: list[OwnNames]) -> bool:
    """Degrade the verdict's timing and flag it `CALL_REPLACED` where the candidate's build
    (`build_dir`) defines, where calls bind, a name every one of the task's own builds imports,
    or defines strong one they all define weak (`own`), or cannot be read; whether it did."""
    # what every own build imports or defines weak: the harness's calls (a name only one own
    # solution calls, `qsort` in a baseline, is that solution's, and a candidate may define one
    # of its own)
    theirs = frozenset.intersection(*(o.imports for o in own)) if own else frozenset()
    weak = frozenset.intersection(*(o.weak for o in own)) if own else frozenset()
    for o in own:  # the harness compiled alone: what it instantiates itself
        if o.harness_weak is not None:
            weak &= o.harness_weak
    c = verdict.candidate
    if not own or not build_dir or c is None or not c.ok:
        return False
    mine, unreadable = taken_over(Path(build_dir), theirs, weak)
    # helper-58: a library's own calls (libstdc++'s steady_clock::now calling clock_gettime,
    # its operator new calling malloc, libc calling fflush) bind to the executable's
    # definition first, and the link exports it for them: no own build exports it
    root = Path(build_dir)
    lent = exported(root) - frozenset.union(*(o.exports for o in own))
    if lent:
        # helper-59: a library calls a name it defines itself through its own relocation
        # (libstdc++'s sized operator delete calls the unsized one): a definition of the
        # executable's takes those calls too where the library's is a real function (global)
        # and not an inline copy the build may hold as well (weak, then only a strong one)
        strong, weak_only = libraries_bind_themselves(root)
        hard = lent & (libraries_call(root) | strong)
        lent = hard | (lent & weak_only & exported(root, strong=True))
    hooks = (PROCESS_HOOKS & imported(root)) - frozenset.union(*(o.imports for o in own))
    if unreadable:
        why = f"its build's symbol tables are not as a linker writes them ({unreadable})"
    elif hooks:
        why = (f"the solution calls {', '.join(sorted(hooks))}, which change what its "
               "harness's own library calls do (a printf format of its own, or a function "
               "found at run time)")  # fmt: skip
    elif mine:
        why = (f"the solution defines {', '.join(sorted(mine))}, which its harness calls from "
               "a shared library: the harness's calls run the solution's code")  # fmt: skip
    elif lent:
        why = (f"the solution defines {', '.join(sorted(lent))}, which a shared library the "
               "harness calls calls: the library's calls run the solution's code")  # fmt: skip
    else:
        return False
    verdict.flags.append(CALL_REPLACED)
    c.status = TimingStatus.DEGRADED
    c.status_reason = why
    return True
