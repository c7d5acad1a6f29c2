"""A compiled harness task's candidate that defines the clock its harness times it with.

A C, C++, Rust or CUDA solution is linked into one binary with the task's harness. A function
it defines under the name of the harness's timer (`clock_gettime`, `steady_clock::now`, ...)
takes the harness's calls at link time, before the C library is searched: the solution then
says how long it took. Red team helper-54 hid a slow prefix of c_popcount_sum's work that way
and, paid what the sandbox's clocks confirm (`perfgym.judge.paid_saving`), still earned 1.134
against its honest twin's 1.018. Whatever the solution's code does at run time, such a name
must be in the binary's symbol table for the link to bind it, so the build's ELF files are
read here (in Python, bounds-checked: the files are the untrusted build's output) and a
candidate defining a timer the task's own solutions do not define is flagged
`harness_clock_replaced`: one of `run_status.CLOCK_CHEAT_FLAGS`, so its timing is degraded
and every reward scores it as a program that hid time.

Local symbols count: a global marked hidden binds the harness's reference in the link and is
written to the executable as a local one. Not seen: a binary the task's recipe strips (its
objects are read where the build leaves them), and code that rewrites the harness's calls at
run time (the witnesses of `paid_saving` still pay only what the clocks confirm).
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Iterator, Sequence
from pathlib import Path

from perfgym.judge.verdict import TimingStatus, Verdict

#: The verdict flag (in `perfgym.run_status.CLOCK_CHEAT_FLAGS`).
CLOCK_REPLACED = "harness_clock_replaced"

#: Timers a harness may time with, by their linked (C or mangled C++) names.
TIMER_SYMBOLS = frozenset({
    "clock_gettime", "__clock_gettime", "__clock_gettime64", "gettimeofday", "__gettimeofday",
    "timespec_get", "clock", "getrusage",
    "__vdso_clock_gettime", "__vdso_gettimeofday", "__vdso_time", "__vdso_clock_getres",
    "_ZNSt6chrono3_V212steady_clock3nowEv", "_ZNSt6chrono3_V212system_clock3nowEv",
    "_ZNSt6chrono12steady_clock3nowEv", "_ZNSt6chrono12system_clock3nowEv",
    "cudaEventElapsedTime", "cudaEventRecord", "cudaEventSynchronize",
})  # fmt: skip

#: Bounds on what is read of a build directory (its files are the build's, untrusted).
MAX_FILES, MAX_FILE_BYTES, MAX_SYMBOLS = 256, 1 << 30, 4_000_000

_SHT_SYMTAB, _SHT_DYNSYM = 2, 11
_STT_NOTYPE, _STT_FUNC, _STT_GNU_IFUNC = 0, 2, 10
_CODE_TYPES = frozenset({_STT_NOTYPE, _STT_FUNC, _STT_GNU_IFUNC})


def timers_defined(build_dir: Path) -> list[str]:
    """The names of `TIMER_SYMBOLS` that an ELF file under `build_dir` defines as code."""
    found: set[str] = set()
    for path in _elf_files(build_dir):
        found |= TIMER_SYMBOLS.intersection(defined_code_symbols(path))
    return sorted(found)


def _elf_files(root: Path) -> Iterator[Path]:
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if seen >= MAX_FILES:
                return
            try:
                if not path.is_file() or path.is_symlink():
                    continue
                with open(path, "rb") as f:
                    if f.read(4) != b"\x7fELF":
                        continue
            except OSError:
                continue
            seen += 1
            yield path


def defined_code_symbols(path: Path) -> set[str]:
    """Names of the functions (and untyped labels) a 64-bit little-endian ELF file defines in
    its symbol tables, of any binding; empty for anything else or anything malformed."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < 64 or size > MAX_FILE_BYTES:
                return set()
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return _symbols(data, size)
    except (OSError, ValueError, struct.error, IndexError):
        return set()


def _symbols(data: mmap.mmap, size: int) -> set[str]:
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return set()  # not ELF64, little-endian (the only kind built here)
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, _ = struct.unpack_from("<HHH", data, 0x3A)
    if shentsize < 64 or shoff <= 0 or shoff >= size:
        return set()
    if shnum == 0:  # extended numbering: the count is section 0's size
        shnum = struct.unpack_from("<Q", data, shoff + 32)[0]
    shnum = min(shnum, (size - shoff) // shentsize)

    def section(k: int) -> tuple[int, int, int, int, int]:
        base = shoff + k * shentsize
        _name, kind = struct.unpack_from("<II", data, base)
        offset, length = struct.unpack_from("<QQ", data, base + 24)
        link, _info = struct.unpack_from("<II", data, base + 40)
        entsize, = struct.unpack_from("<Q", data, base + 56)
        return kind, offset, length, link, entsize

    names: set[str] = set()
    budget = MAX_SYMBOLS
    for k in range(shnum):
        kind, offset, length, link, entsize = section(k)
        if kind not in (_SHT_SYMTAB, _SHT_DYNSYM) or entsize < 24 or link >= shnum:
            continue
        _, str_off, str_len, _, _ = section(link)
        if offset + length > size or str_off + str_len > size:
            continue
        for at in range(offset + entsize, offset + length - 23, entsize):  # entry 0 is null
            budget -= 1
            if budget < 0:
                return names
            st_name, st_info, _other, st_shndx = struct.unpack_from("<IBBH", data, at)
            if st_shndx == 0 or st_name >= str_len or (st_info & 0xF) not in _CODE_TYPES:
                continue
            start = str_off + st_name
            end = data.find(b"\0", start, str_off + str_len)
            if end > start:
                names.add(data[start:end].decode("utf-8", "replace"))
    return names


def flag_replaced_timers(verdict: Verdict, candidate: Sequence[str],
                         own: Sequence[Sequence[str]]) -> bool:  # fmt: skip
    """Degrade the verdict's timing and flag it `CLOCK_REPLACED` where the candidate's build
    defines a timer none of the task's own solutions' builds define; whether it did."""
    mine = sorted(set(candidate).difference(*own)) if own else sorted(set(candidate))
    c = verdict.candidate
    if not mine or c is None or not c.ok:
        return False
    verdict.flags.append(CLOCK_REPLACED)
    c.status = TimingStatus.DEGRADED
    c.status_reason = (
        f"the solution defines {', '.join(mine)}, which its harness times it with: the "
        f"harness's clock is the solution's own"
    )
    return True
