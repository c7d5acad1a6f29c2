"""Writing a file other processes may be reading: whole or not at all, and only when it changes.

A variant's build folder is shared by every judge that prepares the same program (its folder
is named by a digest of the task, the source and the wrapper): one judge's harness may be
reading the solution or the end-mark wrapper while another prepares the same variant. A plain
rewrite truncates first, and a reader between the truncation and the write saw an empty file:
a baseline's harness imported an empty solution and exited 1 (NR) in a full run.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_whole(path: Path, data: bytes, mode: int = 0o644) -> None:
    """`path` holds `data` (readable by `mode`); left alone when it does already, otherwise
    replaced in one step (a reader sees the old file or the new one)."""
    try:
        if path.read_bytes() == data:
            return
    except OSError:
        pass
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
