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
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "_inside" / "exec_stub.c"
#: Outside the build cache (which runs never see): the stub must be visible inside every run.
HELPERS = Path(os.environ.get("PERFGYM_HELPERS", "/var/tmp/perfgym/helpers"))

_why_not: list[str] = []


@functools.cache
def stub_path() -> str | None:
    """Path of the built stub (building it if needed), or None when it cannot be built."""
    source = SOURCE.read_bytes()
    target = HELPERS / f"exec-stub-{hashlib.sha256(source).hexdigest()[:16]}"
    if os.access(target, os.X_OK):
        return str(target)
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        _why_not.append("no C compiler (cc/gcc) to build the exec stub")
        return None
    try:
        HELPERS.mkdir(parents=True, exist_ok=True)
        os.chmod(HELPERS, 0o755)
        fd, tmp = tempfile.mkstemp(dir=HELPERS, prefix=".build-")
        os.close(fd)
        errors = ""
        for flags in (["-static"], []):  # static: no dynamic loader work at every run
            p = subprocess.run([cc, "-O2", *flags, "-o", tmp, str(SOURCE)],
                               capture_output=True, text=True, timeout=120)  # fmt: skip
            if p.returncode == 0:
                os.chmod(tmp, 0o755)
                os.replace(tmp, target)  # atomic: concurrent builders agree on the result
                return str(target)
            errors = p.stderr.strip()[-500:]
        os.unlink(tmp)
        _why_not.append(f"the exec stub did not compile: {errors}")
    except (OSError, subprocess.SubprocessError) as exc:
        _why_not.append(f"the exec stub could not be built: {exc}")
    return None


def unavailable_reason() -> str:
    """Why `stub_path()` returned None ('' when it did not)."""
    return _why_not[-1] if _why_not else ""
