"""A harness build's inline copies of a shared library's functions, kept from that library.

A C++ build defines weak copies of the inline functions and template members it uses. Where a
shared library it needs holds its own weak copy of one and calls it through its own relocations
(a vtable slot, its PLT), the link exports the build's copy and the loader binds the library's
calls to it. An honest copy is the same code, so nothing changes; a solution that defines such
a name weak with other code takes the library's calls. Red team helper-60 defined
`__gnu_cxx::stdio_sync_filebuf<char>::sync()` (the slot `std::cout`'s buffer flushes through)
weak, and rewrote the harness's line in stdout's buffer when the end-mark wrapper flushed
`std::cout`: it beat its honest twin in 7 of 7 rounds (RLPF 1.116 against 1.059), and binding
alone cannot tell its copy from an honest one (`replaced_calls`).

So every harness build is sealed once it links, before it runs: each weak code definition in
an ELF file's dynamic symbol table whose name a needed library defines weak and binds through
its own relocations (`replaced_calls.libraries_bind_themselves`) is rewritten local. The loader
skips local entries when it binds a library's references, so the library keeps its own copy;
the build's own calls were bound at link time and still run its copy. So is a weak vtable
(`_ZTV`, an object) that a needed library defines weak and reaches through its own GOT
(helper-61 made one of its own `std::cout`'s, and sent the wrapper's flush to its code), unless
the program holds it by copy relocation (then the program's copy is the one in use). Other data
objects are never sealed: a template's static member (a facet's `id`) must stay one object for
the program and the library alike. Strong definitions, and
names the library defines global (`operator delete`, `malloc`), are not sealed: they stay
exported and `replaced_calls` flags them.
"""

from __future__ import annotations

import mmap
import os
import struct
from pathlib import Path

from perfgym.judge.elf_symbols import (
    _ENTRY,
    _NOT_CODE,
    _SHT_DYNSYM,
    _STT_OBJECT,
    _WEAK,
    MAX_FILE_BYTES,
    Unreadable,
    _needed,
    _symbol_tables,
    copied_objects,
    elf_files,
)
from perfgym.judge.replaced_calls import _library_self_bound, library_vtables, loaded_with

_LOCAL = 0
#: In a harness build's cache key: a build folder sealed otherwise (or not) is not reused.
VERSION = 2


def seal(root: Path) -> list[str]:
    """Rewrite local, in the ELF files under `root`, the weak code definitions of their dynamic
    symbol tables whose names a library each file needs defines weak and calls through its own
    relocations; the names sealed (a file that cannot be read is left as it is)."""
    sealed: list[str] = []
    for path in elf_files(root):
        try:
            sealed += _seal_file(path)
        except (OSError, ValueError, struct.error, IndexError, OverflowError, Unreadable):
            continue
    return sorted(set(sealed))


def _seal_file(path: Path) -> list[str]:
    with open(path, "r+b") as f:
        size = os.fstat(f.fileno()).st_size
        if size < 64 or size > MAX_FILE_BYTES:
            return []
        with mmap.mmap(f.fileno(), 0) as data:
            tables = _symbol_tables(data, size)
            dyn = [t for t in tables if t[0] == _SHT_DYNSYM]
            if not dyn:
                return []
            inline: set[str] = set()
            vtables: set[str] = set()
            for lib in loaded_with(_needed(data, tables)):
                strong, weak = _library_self_bound(lib)
                inline |= weak
                inline -= strong
                vtables |= library_vtables(lib)
            vtables -= copied_objects(data, tables)  # the program's copy is the one in use
            if not inline and not vtables:
                return []
            _kind, offset, length, str_off, str_len, _first = dyn[0]
            names = []
            for at in range(offset + _ENTRY, offset + length - _ENTRY + 1, _ENTRY):
                st_name, st_info, _other, shndx = struct.unpack_from("<IBBH", data, at)
                kind = st_info & 0xF
                if shndx == 0 or st_info >> 4 != _WEAK or (kind in _NOT_CODE
                                                           and kind != _STT_OBJECT):  # fmt: skip
                    continue
                end = data.find(b"\0", str_off + st_name, str_off + str_len)
                if st_name == 0 or end <= str_off + st_name:
                    continue
                name = data[str_off + st_name : end].decode("utf-8", "replace")
                if name in (vtables if kind == _STT_OBJECT else inline):
                    data[at + 4] = (_LOCAL << 4) | (st_info & 0xF)
                    names.append(name)
            if names:
                data.flush()
            return names
