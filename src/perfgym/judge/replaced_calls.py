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

So the builds' ELF files are compared (read in Python, bounds-checked: they are the untrusted
build's output). A name each of the task's own solutions' builds imports from a shared
library (an undefined symbol of their dynamic symbol tables: the harness's calls, which they
share), that the candidate's build no longer imports and that it defines itself (a symbol of
any type or binding with a section: a hidden global is written to the executable as a local
one) was taken from the library by the candidate. Its
verdict is flagged `harness_call_replaced`, one of `run_status.CLOCK_CHEAT_FLAGS`: its timing
is degraded and every reward scores it as a program that hid time. A static helper of the same
name leaves the harness's import in place and is not flagged. Of C++ names only the clocks
are weighed (`CPP_CLOCKS`).

Not seen: builds linked statically (nothing imported to compare), and code that rewrites the
harness's calls at run time (its GOT or its code); what those hide is still paid only as far
as the witnesses confirm it.
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Iterable, Iterator
from pathlib import Path

from perfgym.judge.verdict import TimingStatus, Verdict

#: The verdict flag (in `perfgym.run_status.CLOCK_CHEAT_FLAGS`).
CALL_REPLACED = "harness_call_replaced"

#: C++'s clocks, by their mangled names: the only C++ names weighed. Other `std::` members an
#: honest build may emit itself (an inline member of `std::string`, say) where the reference's
#: build imported it from libstdc++: the same header code either way.
CPP_CLOCKS = frozenset({
    "_ZNSt6chrono3_V212steady_clock3nowEv", "_ZNSt6chrono3_V212system_clock3nowEv",
    "_ZNSt6chrono12steady_clock3nowEv", "_ZNSt6chrono12system_clock3nowEv",
})  # fmt: skip

#: Bounds on what is read of a build directory (its files are the build's, untrusted).
MAX_FILES, MAX_FILE_BYTES = 256, 1 << 30

_SHT_SYMTAB, _SHT_DYNSYM = 2, 11
_ENTRY = 24  # an Elf64_Sym


def elf_files(root: Path) -> Iterator[Path]:
    """The ELF files under `root` (at most MAX_FILES, no links followed)."""
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if seen >= MAX_FILES:
                return
            try:
                if path.is_symlink() or not path.is_file():
                    continue
                with open(path, "rb") as f:
                    if f.read(4) != b"\x7fELF":
                        continue
            except OSError:
                continue
            seen += 1
            yield path


def imported(root: Path) -> frozenset[str]:
    """The names the ELF files under `root` import from shared libraries (the undefined
    symbols of their dynamic symbol tables)."""
    names: set[str] = set()
    for path in elf_files(root):
        names |= _read(path, _undefined_dynamic)
    return frozenset(names)


def defined_among(root: Path, names: Iterable[str]) -> frozenset[str]:
    """Which of `names` an ELF file under `root` defines (any symbol type or binding, with a
    section). Found by searching the string tables for each name, then the symbol tables for
    an entry pointing there: no walk of every symbol (a build can write millions)."""
    wanted = [n.encode() for n in names if n]
    found: set[str] = set()
    for path in elf_files(root):
        found |= _read(path, lambda data, tables: _defined(data, tables, wanted))
    return frozenset(found)


def _read(path: Path, what) -> set[str]:  # type: ignore[no-untyped-def]
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < 64 or size > MAX_FILE_BYTES:
                return set()
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                tables = _symbol_tables(data, size)
                return what(data, tables) if tables else set()
    except (OSError, ValueError, struct.error, IndexError, OverflowError):
        return set()


def _symbol_tables(data: mmap.mmap, size: int) -> list[tuple[int, int, int, int, int]]:
    """(kind, offset, length, strings offset, strings length) of each symbol table of a
    64-bit little-endian ELF file; none for anything else or anything out of bounds."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return []  # not ELF64, little-endian (the only kind built here)
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, _ = struct.unpack_from("<HHH", data, 0x3A)
    if shentsize < 64 or shoff <= 0 or shoff >= size:
        return []
    if shnum == 0:  # extended numbering: the count is section 0's size
        shnum = struct.unpack_from("<Q", data, shoff + 32)[0]
    shnum = min(shnum, (size - shoff) // shentsize)

    def section(k: int) -> tuple[int, int, int, int, int]:
        base = shoff + k * shentsize
        kind, = struct.unpack_from("<I", data, base + 4)
        offset, length = struct.unpack_from("<QQ", data, base + 24)
        link, = struct.unpack_from("<I", data, base + 40)
        entsize, = struct.unpack_from("<Q", data, base + 56)
        return kind, offset, length, link, entsize

    out = []
    for k in range(shnum):
        kind, offset, length, link, entsize = section(k)
        if kind not in (_SHT_SYMTAB, _SHT_DYNSYM) or entsize != _ENTRY or link >= shnum:
            continue
        _, str_off, str_len, _, _ = section(link)
        if offset + length <= size and str_off + str_len <= size:
            out.append((kind, offset, length, str_off, str_len))
    return out


def _undefined_dynamic(data: mmap.mmap, tables) -> set[str]:  # type: ignore[no-untyped-def]
    names = set()
    for kind, offset, length, str_off, str_len in tables:
        if kind != _SHT_DYNSYM:
            continue  # a dynamic symbol table is small: the linker writes only what it links
        for at in range(offset + _ENTRY, offset + length - _ENTRY + 1, _ENTRY):
            st_name, st_info, _other, st_shndx = struct.unpack_from("<IBBH", data, at)
            if st_shndx != 0 or st_name == 0 or st_name >= str_len or st_info >> 4 not in (1, 2):
                continue
            end = data.find(b"\0", str_off + st_name, str_off + str_len)
            if end > str_off + st_name:
                names.add(data[str_off + st_name : end].decode("utf-8", "replace"))
    return names


def _defined(data: mmap.mmap, tables, wanted: list[bytes]) -> set[str]:  # type: ignore[no-untyped-def]
    found = set()
    for _kind, offset, length, str_off, str_len in tables:
        for name in wanted:
            for at_name in _string_offsets(data, str_off, str_len, name):
                if _entry_with_name(data, offset, length, at_name):
                    found.add(name.decode("utf-8", "replace"))
                    break
    return found


def _string_offsets(data: mmap.mmap, str_off: int, str_len: int, name: bytes) -> Iterator[int]:
    """Offsets in a string table at which `name` reads (it may end a longer string: the
    linker shares tails, "clock_gettime" inside "__clock_gettime")."""
    end, needle = str_off + str_len, name + b"\0"
    at = data.find(needle, str_off, end)
    while at >= 0:
        yield at - str_off
        at = data.find(needle, at + 1, end)


def _entry_with_name(data: mmap.mmap, offset: int, length: int, at_name: int) -> bool:
    """Whether a symbol of the table names `at_name` and has a section (is defined)."""
    key, end = at_name.to_bytes(4, "little"), offset + length
    at = data.find(key, offset + _ENTRY, end)
    while at >= 0:
        if (at - offset) % _ENTRY == 0 and at + _ENTRY <= end:
            if struct.unpack_from("<H", data, at + 6)[0] != 0:
                return True
            at = data.find(key, at + _ENTRY, end)
        else:
            at = data.find(key, at + 1, end)
    return False


def flag_replaced_calls(verdict: Verdict, build_dir: str, imports: frozenset[str],
                        own: list[frozenset[str]]) -> bool:  # fmt: skip
    """Degrade the verdict's timing and flag it `CALL_REPLACED` where the candidate's build
    (`build_dir`, importing `imports`) defines a name every one of the task's own builds
    imports (`own`) that it no longer imports; whether it did."""
    # what every own build imports: the harness's calls (a name only one own solution calls,
    # `qsort` in a baseline, is that solution's, and a candidate may define one of its own)
    theirs = frozenset.intersection(*own) if own else frozenset()
    gone = {n for n in theirs - imports if not n.startswith("_Z") or n in CPP_CLOCKS}
    c = verdict.candidate
    if not gone or not build_dir or c is None or not c.ok:
        return False
    mine = sorted(defined_among(Path(build_dir), gone))
    if not mine:
        return False
    verdict.flags.append(CALL_REPLACED)
    c.status = TimingStatus.DEGRADED
    c.status_reason = (
        f"the solution defines {', '.join(mine)}, which its harness calls from a shared "
        f"library: the harness's calls run the solution's code"
    )
    return True
