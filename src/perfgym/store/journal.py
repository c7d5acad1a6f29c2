"""`ResultsJournal`: a results file written as results are produced, so an interrupt keeps them.

The header is the first line; every record is one line written whole by a single `write()`
(a killed process leaves at most a torn last line, which `scan_results` ignores); the file is
fsync'd every `fsync_every` records or `fsync_s` seconds, whichever comes first, and on close.
While a journal is open its file is `flock`ed, so a second run never resumes a live one.
`finish()` rewrites the file atomically, records in their final order, header marked complete.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from perfgym.store.jsontext import dump_json
from perfgym.store.results_file import HEADER_KEY

#: Records between two fsyncs, and the longest time a written record waits for one.
FSYNC_EVERY = 16
FSYNC_S = 1.0


def _fsync_dir(path: Path) -> None:
    """Make a rename in `path`'s directory durable (best effort: some filesystems refuse)."""
    with contextlib.suppress(OSError):
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _tmp_of(path: Path) -> Path:
    """A temporary sibling of `path` no other process writes (renamed over `path` when full)."""
    return path.with_name(f"{path.name}.{os.getpid()}.tmp")


def _lines(head: dict[str, Any], records: Iterable[BaseModel]) -> bytes:
    text = json.dumps(head, default=str) + "\n" + "".join(dump_json(r) + "\n" for r in records)
    return text.encode("utf-8")


def is_locked(path: Path) -> bool:
    """Whether a live journal holds `path` (another run is writing it now)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops a lock taken here
    return False


class ResultsJournal:
    """An open, append-only results file. `head` is the header object ({HEADER_KEY: {...}})."""

    def __init__(
        self,
        path: Path,
        head: dict[str, Any],
        records: Iterable[BaseModel] = (),
        *,
        fsync_every: int = FSYNC_EVERY,
        fsync_s: float = FSYNC_S,
    ) -> None:
        """Start `path` afresh (atomically) with the header and `records` (those a resumed run
        keeps), then hold it open for appending."""
        self.path = path
        self.head = head
        self.fsync_every = fsync_every
        self.fsync_s = fsync_s
        self.written = 0
        self._unsynced = 0
        self._synced_at = time.monotonic()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = _tmp_of(path)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            records = list(records)
            os.write(fd, _lines(head, records))
            os.fsync(fd)
            os.replace(tmp, path)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        _fsync_dir(path)
        self._fd: int | None = fd
        self.written = len(records)

    def append(self, records: Iterable[BaseModel]) -> None:
        """Write each record as one line now; fsync when the batch or the interval is full."""
        if self._fd is None:
            raise ValueError(f"results journal {self.path} is closed")
        for r in records:
            line = (dump_json(r) + "\n").encode("utf-8")
            view = memoryview(line)
            while view:  # a regular file takes it in one write; loop in case it does not
                view = view[os.write(self._fd, view) :]
            self.written += 1
            self._unsynced += 1
        if self._unsynced >= self.fsync_every or (
            self._unsynced and time.monotonic() - self._synced_at >= self.fsync_s
        ):
            self.sync()

    def sync(self) -> None:
        if self._fd is not None and self._unsynced:
            os.fsync(self._fd)
        self._unsynced = 0
        self._synced_at = time.monotonic()

    def close(self) -> None:
        """Sync and release the file (it stays as it is: a resumable, unfinished journal)."""
        if self._fd is None:
            return
        try:
            self.sync()
        finally:
            os.close(self._fd)
            self._fd = None

    def finish(self, records: Iterable[BaseModel], **header_fields: Any) -> None:
        """Replace the journal, atomically, by the final file: header marked complete (plus
        `header_fields`), then `records` in their final order."""
        head = {HEADER_KEY: {**self.head[HEADER_KEY], **header_fields, "complete": True}}
        tmp = _tmp_of(self.path)
        with tmp.open("wb") as f:
            f.write(_lines(head, records))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        _fsync_dir(self.path)
        self.head = head
        self.close()

    def __enter__(self) -> ResultsJournal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
