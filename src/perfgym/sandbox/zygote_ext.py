"""The warm Python worker's zygote loop in C (`_inside/zygote_loop.c`), built on first use as a
CPython extension for the interpreter the workers run; None (and the zygote keeps its Python
loop) without a C compiler or this interpreter's headers."""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import sysconfig
from pathlib import Path

from perfgym.sandbox.helper_build import HELPERS, build, compiler

SOURCE = Path(__file__).resolve().parent / "_inside" / "zygote_loop.c"
#: Set to 0 to keep the Python loop (a comparison, or a platform where the build misbehaves).
ENV = "PERFGYM_ZYGOTE_C"

_why_not: list[str] = []


def extension_path(python: str | None = None) -> str | None:
    """The built extension for `python` (this interpreter by default: another one's headers
    are not known here, so it gets none), or None (`PERFGYM_ZYGOTE_C=0`: none wanted)."""
    if os.environ.get(ENV, "1") == "0":
        return None
    return _built(os.path.realpath(python) if python else "")


@functools.cache
def _built(python: str) -> str | None:
    if python and python != os.path.realpath(sys.executable):
        _why_not.append("the workers run another interpreter than this one")
        return None
    include = sysconfig.get_paths().get("include", "")
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    if not include or not os.path.exists(os.path.join(include, "Python.h")):
        _why_not.append(f"no Python.h under {include!r}")
        return None
    key = hashlib.sha256(
        SOURCE.read_bytes() + include.encode() + suffix.encode() + sys.version.encode()
    )
    target = HELPERS / f"zygote-loop-{key.hexdigest()[:16]}{suffix}"
    cc = compiler()
    if cc is None and not target.exists():
        _why_not.append("no C compiler (cc/gcc) to build the zygote loop")
        return None
    variants = [[str(cc), "-O2", "-shared", "-fPIC", f"-I{include}", str(SOURCE)]]
    return build(target, variants, "the zygote loop", _why_not)


def unavailable_reason() -> str:
    """Why `extension_path()` returned None ('' when it did not)."""
    if os.environ.get(ENV, "1") == "0":
        return f"{ENV}=0"
    return _why_not[-1] if _why_not else ""
