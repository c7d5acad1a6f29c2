"""PerfCodeBench's `external/` library folder: where it is, and which tasks need what is absent.

Some published tasks build against third-party libraries (simdutf, xxhash, yyjson, CRoaring,
...) kept in an `external/` folder beside `executable_tasks/` that the repository does not ship.
A task reaches it three ways, all checked at load time:
  - a build source or copied file under `external/` (`external/simdutf/simdutf.cpp`);
  - a `-I` include directory under `external/` in the build flags or command;
  - a quoted `#include "x.h"` in the baseline, reference or harness that no include directory
    of the task (its own files, its `-I` paths, the system's) provides.
The folder is found in this order: the `external=` argument (`--external PATH`), the
`PERFGYM_PCB_EXTERNAL` environment variable, `<root>/external`. Inside the sandbox it is seen
at `<root>/external`, so the published recipes run unchanged.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

EXTERNAL_ENV = "PERFGYM_PCB_EXTERNAL"
EXTERNAL_DIR = "external"
#: Where a compiler finds a header no -I names (Debian's default search path, C and C++).
SYSTEM_INCLUDE_DIRS = (Path("/usr/local/include"), Path("/usr/include"))
_QUOTED_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)
_SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".cu", ".cuh")


def locate_external(root: Path, external: str | Path | None = None) -> Path | None:
    """The external folder: the argument, else $PERFGYM_PCB_EXTERNAL, else `<root>/external`.

    None when none of them names an existing directory (tasks needing it are then unsupported).
    """
    chosen = external if external is not None else os.environ.get(EXTERNAL_ENV) or None
    path = Path(chosen).expanduser() if chosen is not None else root / EXTERNAL_DIR
    return path.resolve() if path.is_dir() else None


def as_external(path: Path, root: Path, external: Path | None) -> Path | None:
    """`path` (under `<root>/external/`) moved into the located folder; None when not external."""
    try:
        rest = path.relative_to(root / EXTERNAL_DIR)
    except ValueError:
        return None
    return (external or root / EXTERNAL_DIR) / rest


def include_dirs(flags: Iterable[str]) -> list[str]:
    """The directories of `-I DIR`, `-IDIR`, `-isystem DIR` and `-iquote DIR` in `flags`."""
    out: list[str] = []
    pending = False
    for flag in flags:
        if pending:
            out.append(flag)
            pending = False
        elif flag in ("-I", "-isystem", "-iquote"):
            pending = True
        elif flag.startswith("-I") and len(flag) > 2:
            out.append(flag[2:])
        elif flag.startswith(("-isystem", "-iquote")) and flag not in ("-isystem", "-iquote"):
            out.append(flag[len("-isystem") if flag.startswith("-isystem") else len("-iquote") :])
    return out


def missing_external(
    *,
    root: Path,
    external: Path | None,
    paths: Iterable[Path],
    dirs: Iterable[Path],
    sources: Iterable[Path],
    provided: Iterable[str] = (),
) -> str | None:
    """Why the task cannot build here, or None: an external file, -I directory or header absent.

    `paths` are files the build reads, `dirs` its include directories (both resolved against
    the benchmark root), `sources` the files whose quoted includes must resolve, `provided`
    the names of files the build copies beside them (copy_sources_to_build).
    """
    beside = set(provided)
    where = str(external) if external is not None else f"none located ({_how_to_set()})"
    for path in paths:
        moved = as_external(path, root, external)
        if moved is not None and not moved.is_file():
            return f"needs external file {_short(path, root)} (external folder: {where})"
    search: list[Path] = []
    for d in dirs:
        moved = as_external(d, root, external)
        if moved is not None and not moved.is_dir():
            return (
                f"needs external include directory {_short(d, root)} (-I; external folder: {where})"
            )
        search.append(moved if moved is not None else d)
    for source in sources:
        if not source.is_file() or not source.name.endswith(_SOURCE_SUFFIXES):
            continue
        text = source.read_text(encoding="utf-8", errors="replace")
        for header in _QUOTED_INCLUDE.findall(text):
            places = [source.parent, *search, *SYSTEM_INCLUDE_DIRS]
            if header not in beside and not any((p / header).is_file() for p in places):
                return (
                    f"needs header {header!r} (included by {_short(source, root)}), found in none "
                    f"of its include directories; an external library? (external folder: {where})"
                )
    return None


def _short(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _how_to_set() -> str:
    return f"pass --external PATH or set {EXTERNAL_ENV}"
