"""Reading ELF symbol tables of a build and of the libraries it needs, bounds-checked (a
build's files are untrusted): the primitives `replaced_calls` and `sealed_exports` decide on.

Each reader is a function of (the file's bytes, its symbol tables as `_symbol_tables` finds
them), run through `_read`; a file whose tables are not as a linker writes them raises
`Unreadable`, which the deciding module treats as flagged.
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from perfgym.errors import PerfgymError

#: Bounds on what is read of a build directory (its files are the build's, untrusted).
MAX_FILES, MAX_FILE_BYTES = 256, 1 << 30


#: More symbols in one table than an honest solution's build has (a single source file's:
#: thousands); a table this long is read no further, and the build is flagged.
MAX_SYMBOLS = 1_000_000


#: More entries naming one string than an honest table has (statics of one name in several
#: files); so many is a table made to be slow to search, and flagged.
MAX_SAME_NAME = 64


_SHT_SYMTAB, _SHT_DYNAMIC, _SHT_DYNSYM = 2, 6, 11


_DT_NEEDED = 1


_ENTRY = 24  # an Elf64_Sym


_LOCAL, _GLOBAL, _WEAK, _UNIQUE = 0, 1, 2, 10


_STT_OBJECT, _STT_SECTION, _STT_FILE, _STT_TLS = 1, 3, 4, 6


#: Symbol types that are not code a library's call can run.
_NOT_CODE = frozenset({_STT_OBJECT, _STT_SECTION, _STT_FILE, _STT_TLS})


#: More dynamic symbols than a build exporting nothing of its own has (a walk of them is
#: bounded by this, not by MAX_SYMBOLS).
MAX_DYNAMIC = 100_000


#: An unnamed local FILE symbol (st_name 0, STT_FILE, SHN_ABS): the linker writes one before
#: the globals it made local (hidden ones); a source file's own FILE symbol has its name.
_UNNAMED_FILE = struct.pack("<IBBH", 0, _STT_FILE, 0, 0xFFF1)


class Unreadable(PerfgymError, ValueError):
    """A build's symbol tables are not as a linker writes them (kept inside this module: the
    build is flagged)."""


#: A folder of an own solution's build holding the harness's sources compiled alone (a
#: compile-form recipe's; `variant._harness_objects`), with `.done` once they all compiled.
HARNESS_OBJECTS = ".perfgym-harness-objects"


def elf_files(root: Path) -> Iterator[Path]:
    """The ELF files under `root` (at most MAX_FILES, no links followed), the harness's
    objects (`HARNESS_OBJECTS`) left out."""
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != HARNESS_OBJECTS)
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


#: Relocations read of one library (libstdc++ has about 10,000).
MAX_RELOCATIONS = 4_000_000


_SHT_RELA = 4


def _self_bound(data: mmap.mmap, tables: list[tuple[int, ...]]) -> set[str]:
    """'G:name' or 'W:name' for each code symbol a relocation of the dynamic symbol table
    refers to that the file defines itself (its binding: global or unique, or weak); 'V:name'
    for each weak vtable (`_ZTV`, an object) it so refers to."""
    out = set()
    for name, binding, kind, _type in _relocated_definitions(data, tables):
        if kind not in _NOT_CODE:
            out.add(("W:" if binding == _WEAK else "G:") + name)
        elif kind == _STT_OBJECT and binding == _WEAK and name.startswith("_ZTV"):
            out.add("V:" + name)
    return out


#: The relocation type by which a program holds a library's data object (x86-64, aarch64).
_COPY_RELOCATIONS = frozenset({5, 1024})


def copied_objects(data: mmap.mmap, tables: list[tuple[int, ...]]) -> set[str]:
    """The names a file holds by copy relocation (`std::cout`, `stdout`): the library binds its
    references to the program's copy, which must stay exported."""
    return {name for name, _b, _k, rtype in _relocated_definitions(data, tables)
            if rtype in _COPY_RELOCATIONS}  # fmt: skip


def _relocated_definitions(data: mmap.mmap, tables: list[tuple[int, ...]]
                           ) -> list[tuple[str, int, int, int]]:  # fmt: skip
    """(name, binding, type, relocation type) of each symbol the file defines that a
    relocation of its dynamic symbol table refers to."""
    dyn = [t for t in tables if t[0] == _SHT_DYNSYM]
    if not dyn:
        return []
    _kind, sym_off, sym_len, str_off, str_len, _first = dyn[0]
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, _ = struct.unpack_from("<HHH", data, 0x3A)
    size, seen = len(data), 0
    refs: dict[int, int] = {}
    for k in range(min(shnum, (size - shoff) // max(shentsize, 64), 4096)):
        base = shoff + k * shentsize
        (kind,) = struct.unpack_from("<I", data, base + 4)
        offset, length = struct.unpack_from("<QQ", data, base + 24)
        if kind != _SHT_RELA or offset + length > size:
            continue
        for at in range(offset, offset + length - 23, 24):
            seen += 1
            if seen > MAX_RELOCATIONS:
                raise Unreadable(f"more than {MAX_RELOCATIONS} relocations")
            (info,) = struct.unpack_from("<Q", data, at + 8)
            if info >> 32 and refs.get(info >> 32) not in _COPY_RELOCATIONS:
                refs[info >> 32] = info & 0xFFFFFFFF
    out = []
    for index, rtype in refs.items():
        at = sym_off + index * _ENTRY
        if at + _ENTRY > sym_off + sym_len:
            continue
        st_name, st_info, _other, shndx = struct.unpack_from("<IBBH", data, at)
        binding, kind = st_info >> 4, st_info & 0xF
        if shndx == 0 or binding not in (_GLOBAL, _WEAK, _UNIQUE):
            continue
        end = data.find(b"\0", str_off + st_name, str_off + str_len)
        if st_name and end > str_off + st_name:
            out.append((data[str_off + st_name : end].decode("utf-8", "replace"), binding, kind,
                        rtype))  # fmt: skip
    return out


def _needed(data: mmap.mmap, tables: list[tuple[int, ...]]) -> set[str]:
    """The DT_NEEDED names of the file's dynamic section (the libraries it links)."""
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, _ = struct.unpack_from("<HHH", data, 0x3A)
    size = len(data)
    names: set[str] = set()
    for k in range(min(shnum, (size - shoff) // max(shentsize, 64), 4096)):
        base = shoff + k * shentsize
        (kind,) = struct.unpack_from("<I", data, base + 4)
        if kind != _SHT_DYNAMIC:
            continue
        offset, length = struct.unpack_from("<QQ", data, base + 24)
        (link,) = struct.unpack_from("<I", data, base + 40)
        lbase = shoff + link * shentsize
        str_off, str_len = struct.unpack_from("<QQ", data, lbase + 24)
        if offset + length > size or str_off + str_len > size:
            return names
        for at in range(offset, offset + min(length, 16 * 4096) - 15, 16):
            tag, val = struct.unpack_from("<qQ", data, at)
            if tag == 0:
                break
            if tag == _DT_NEEDED and val < str_len:
                end = data.find(b"\0", str_off + val, str_off + str_len)
                if end > str_off + val:
                    names.add(data[str_off + val : end].decode("utf-8", "replace"))
    return names


def _each(paths: Iterable[Path], what: Callable[[mmap.mmap, list[tuple[int, ...]]], set[str]]
          ) -> frozenset[str]:  # fmt: skip
    names: set[str] = set()
    for path in paths:
        try:
            names |= _read(path, what)
        except Unreadable:
            continue
    return frozenset(names)


def _read(path: Path, what: Callable[[mmap.mmap, list[tuple[int, ...]]], set[str]]) -> set[str]:
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < 64 or size > MAX_FILE_BYTES:
                return set()
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                tables = _symbol_tables(data, size)
                return what(data, tables) if tables else set()
    except (OSError, ValueError, struct.error, IndexError, OverflowError) as exc:
        if isinstance(exc, Unreadable):
            raise
        return set()


def _symbol_tables(data: mmap.mmap, size: int) -> list[tuple[int, ...]]:
    """(kind, offset, length, strings offset, strings length, first global) of each symbol
    table of a 64-bit little-endian ELF file; none for anything else or out of bounds.
    Unreadable: two tables of one kind (the linker writes one; helper-56 added a second
    dynamic one), or one longer than MAX_SYMBOLS."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return []  # not ELF64, little-endian (the only kind built here)
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, _ = struct.unpack_from("<HHH", data, 0x3A)
    if shentsize < 64 or shoff <= 0 or shoff >= size:
        return []
    if shnum == 0:  # extended numbering: the count is section 0's size
        shnum = struct.unpack_from("<Q", data, shoff + 32)[0]
    shnum = min(shnum, (size - shoff) // shentsize)

    def section(k: int) -> tuple[int, int, int, int, int, int]:
        base = shoff + k * shentsize
        (kind,) = struct.unpack_from("<I", data, base + 4)
        offset, length = struct.unpack_from("<QQ", data, base + 24)
        link, info = struct.unpack_from("<II", data, base + 40)
        (entsize,) = struct.unpack_from("<Q", data, base + 56)
        return kind, offset, length, link, info, entsize

    out = []
    for k in range(shnum):
        kind, offset, length, link, info, entsize = section(k)
        if kind not in (_SHT_SYMTAB, _SHT_DYNSYM):
            continue
        if any(t[0] == kind for t in out):
            raise Unreadable("two symbol tables of one kind")
        limit = MAX_DYNAMIC if kind == _SHT_DYNSYM else MAX_SYMBOLS
        if length // _ENTRY > limit:
            raise Unreadable(f"{length // _ENTRY} symbols in one table, more than {limit}")
        if entsize != _ENTRY or link >= shnum:
            continue
        _, str_off, str_len, _, _, _ = section(link)
        if offset + length <= size and str_off + str_len <= size:
            out.append((kind, offset, length, str_off, str_len, info))
    return out


def _undefined_dynamic(data: mmap.mmap, tables: list[tuple[int, ...]]) -> set[str]:
    """Undefined global or weak names of the dynamic symbol table (a build's imports; small:
    the linker writes only what it links)."""
    return _names_where(
        data,
        tables,
        _SHT_DYNSYM,
        lambda binding, _kind, shndx: shndx == 0 and binding in (_GLOBAL, _WEAK),
    )


def _weak_definitions(data: mmap.mmap, tables: list[tuple[int, ...]]) -> set[str]:
    """Weak definitions of the static symbol table (the dynamic one where there is none)."""
    return _names_where(
        data, tables, _SHT_SYMTAB, lambda binding, _kind, shndx: binding == _WEAK and shndx != 0
    )


def _dynamic_definitions(data: mmap.mmap, tables: list[tuple[int, ...]]) -> set[str]:
    """Defined global, weak or unique code symbols of the dynamic symbol table: a build that
    exports nothing of its own (no `-rdynamic`) has there only what a shared library calls
    (so the library's calls run the build's code) and the data objects it copies from one
    (`stdout`, `std::cout`: STT_OBJECT, left out)."""
    return _names_where(
        data,
        tables,
        _SHT_DYNSYM,
        lambda binding, kind, shndx: (
            shndx != 0 and kind not in _NOT_CODE and binding in (_GLOBAL, _WEAK, _UNIQUE)
        ),
    )


def _strong_dynamic_definitions(data: mmap.mmap, tables: list[tuple[int, ...]]) -> set[str]:
    """Those of `_dynamic_definitions` bound global or unique (not weak)."""
    return _names_where(
        data,
        tables,
        _SHT_DYNSYM,
        lambda binding, kind, shndx: (
            shndx != 0 and kind not in _NOT_CODE and binding in (_GLOBAL, _UNIQUE)
        ),
    )


def _names_where(data: mmap.mmap, tables: list[tuple[int, ...]], table: int,
                 keep: Callable[[int, int, int], bool]) -> set[str]:  # fmt: skip
    """The names of the entries of the file's `table` (static or dynamic; a static one falls
    back to the dynamic one where the file has none) whose binding, type and section index
    `keep` takes."""
    chosen = [t for t in tables if t[0] == table]
    if not chosen and table == _SHT_DYNSYM:
        return set()
    _kind, offset, length, str_off, str_len, _first = (chosen or tables)[0]
    names = set()
    for at in range(offset + _ENTRY, offset + length - _ENTRY + 1, _ENTRY):
        st_name, st_info, _other, st_shndx = struct.unpack_from("<IBBH", data, at)
        if st_name == 0 or st_name >= str_len or not keep(st_info >> 4, st_info & 0xF, st_shndx):
            continue
        end = data.find(b"\0", str_off + st_name, str_off + str_len)
        if end > str_off + st_name:
            names.add(data[str_off + st_name : end].decode("utf-8", "replace"))
    return names
