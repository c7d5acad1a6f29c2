"""Compiled helpers (the exec stub, the zygote's C loop): built once per source version into
the helpers directory, which every sandbox sees, on first use; a build that fails says why."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

#: Outside the build cache (which runs never see): a helper must be visible inside every run.
HELPERS = Path(os.environ.get("PERFGYM_HELPERS", "/var/tmp/perfgym/helpers"))


def compiler() -> str | None:
    return shutil.which("cc") or shutil.which("gcc")


def build(target: Path, variants: list[list[str]], what: str, why_not: list[str]) -> str | None:
    """`target`, built if it is not there yet by the first of `variants` that succeeds (each a
    compiler command line without its `-o OUT`, appended here); None (and why, appended to
    `why_not`) when none does. Concurrent builders agree: the result is renamed into place."""
    if os.access(target, os.R_OK):
        return str(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(target.parent, 0o755)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".build-")
        os.close(fd)
        errors = ""
        for cmd in variants:
            p = subprocess.run([*cmd, "-o", tmp], capture_output=True, text=True, timeout=120)
            if p.returncode == 0:
                os.chmod(tmp, 0o755)
                os.replace(tmp, target)  # atomic: concurrent builders agree on the result
                return str(target)
            errors = p.stderr.strip()[-500:]
        os.unlink(tmp)
        why_not.append(f"{what} did not compile: {errors}")
    except (OSError, subprocess.SubprocessError) as exc:
        why_not.append(f"{what} could not be built: {exc}")
    return None
