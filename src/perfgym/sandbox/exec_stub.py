"""The compiled exec stub programs are spawned through: built once per source version, on first use.

Starting a program from the Python supervisor with fork() copies the supervisor's address space,
runs Python in the child (copy-on-write faults) and tears the copy down again at exec: 1.5 ms
more per run than the stub on this 2-core VM (15.6 vs 14.0 ms for `python3 -S -c pass`, load 3). With the stub, the supervisor uses posix_spawn (the child
shares its memory until the stub's exec) and the stub does the last steps in C. Without a C
compiler the supervisor keeps the fork path; nothing else changes.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from perfgym.sandbox.helper_build import HELPERS, build, compiler

SOURCE = Path(__file__).resolve().parent / "_inside" / "exec_stub.c"

_why_not: list[str] = []


@functools.cache
def stub_path() -> str | None:
    """Path of the built stub (building it if needed), or None when it cannot be built."""
    source = SOURCE.read_bytes()
    target = HELPERS / f"exec-stub-{hashlib.sha256(source).hexdigest()[:16]}"
    cc = compiler()
    if cc is None and not target.exists():
        _why_not.append("no C compiler (cc/gcc) to build the exec stub")
        return None
    # static: no dynamic loader work at every run
    variants = [[str(cc), "-O2", *flags, str(SOURCE)] for flags in (["-static"], [])]
    return build(target, variants, "the exec stub", _why_not)


def unavailable_reason() -> str:
    """Why `stub_path()` returned None ('' when it did not)."""
    return _why_not[-1] if _why_not else ""
