"""`CopyGuard`: a cap on the files and bytes one command may add to a repository copy.

The copy is a host directory bound writable into the run; the sandbox caps its /tmp but not
the host disk the copy lives on, so a command (a build, the agent's shell, a patch's tests)
could fill it with millions of files. The guard lists the copy before the command, watches it
from a host thread while the command runs and, past the cap, locks the copy: as root, every
directory is handed to root (0755), which the run's unprivileged user cannot undo, so the
command writes nothing more there. After the command the files it added are removed (the copy
is as the command found it, apart from files it edited in place), ownership is given back,
and the run is reported as failed with the figures. Nothing else is lost: the copy, the
earlier commands' work and the host stay usable.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from perfgym.sandbox.request import RUN_UID

#: Files (and directories) one command may add to a copy, and bytes it may add.
MAX_FILES = 50_000
MAX_BYTES = 2 << 30
_POLL_S = 0.2


@dataclass(frozen=True)
class CopyUsage:
    files: int
    bytes: int


def _scan(root: Path, limit: int | None = None) -> tuple[set[str], int]:
    """Relative paths under `root` (not following links) and their bytes; stops past `limit`."""
    seen: set[str] = set()
    size = 0
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        for name in dirnames + filenames:
            seen.add(name if rel == "." else os.path.join(rel, name))
        for name in filenames:
            try:
                size += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
        if limit is not None and len(seen) > limit:
            break
    return seen, size


class CopyGuard:
    """`with CopyGuard(path) as g: run...`; then `g.breached` says whether the cap was passed
    (and `g.message` how); the files the command added are gone by then."""

    def __init__(self, path: Path, *, max_files: int = MAX_FILES, max_bytes: int = MAX_BYTES) -> None:  # fmt: skip
        self.path = path
        self.max_files = max_files
        self.max_bytes = max_bytes
        self.breached: CopyUsage | None = None
        self._before: set[str] = set()
        self._before_bytes = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._locked = False

    def __enter__(self) -> CopyGuard:
        self._before, self._before_bytes = _scan(self.path)
        self._thread = threading.Thread(target=self._watch, name="perfgym-copy-guard", daemon=True)
        self._thread.start()
        return self

    def _over(self) -> CopyUsage | None:
        seen, size = _scan(self.path, len(self._before) + self.max_files)
        added, grown = len(seen - self._before), size - self._before_bytes
        if added > self.max_files or grown > self.max_bytes:
            return CopyUsage(added, grown)
        return None

    def _watch(self) -> None:
        pause = _POLL_S
        while not self._stop.wait(pause):
            start = time.monotonic()
            over = self._over()
            pause = max(_POLL_S, 2 * (time.monotonic() - start))  # a big copy: look less often
            if over is not None:
                self.breached = over
                self._lock()
                return

    def _lock(self) -> None:
        """Every directory to root, 0755: the run's user can add nothing more (repeated until
        a pass finds no directory it had not locked: one made meanwhile is caught next)."""
        if os.geteuid() != 0:
            return
        self._locked = True
        done: set[str] = set()
        while True:
            fresh = 0
            for dirpath, _dirs, _files in os.walk(self.path):
                if dirpath in done:
                    continue
                try:
                    os.lchown(dirpath, 0, 0)
                    os.chmod(dirpath, 0o755)
                except OSError:
                    pass
                done.add(dirpath)
                fresh += 1
            if not fresh:
                return

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.breached is None:
            self.breached = self._over()
        if self.breached is not None:
            self._undo()

    def _undo(self) -> None:
        """Remove what the command added; give the copy back to the run user."""
        after, _ = _scan(self.path)
        for rel in sorted(after - self._before, key=lambda p: p.count(os.sep), reverse=True):
            full = self.path / rel
            try:
                if full.is_dir() and not full.is_symlink():
                    full.rmdir()  # its own new entries went first (deepest first)
                else:
                    full.unlink()
            except OSError:
                pass
        if self._locked:
            for dirpath, dirnames, filenames in os.walk(self.path):
                os.lchown(dirpath, RUN_UID, RUN_UID)
                for name in dirnames + filenames:
                    os.lchown(os.path.join(dirpath, name), RUN_UID, RUN_UID)

    @property
    def message(self) -> str:
        u = self.breached
        if u is None:
            return ""
        return (f"the command wrote past the copy's cap ({u.files} new files or more, {u.bytes} "
                f"bytes more; at most {self.max_files} files and {self.max_bytes} bytes): "
                "stopped, and the files it added were removed")  # fmt: skip
