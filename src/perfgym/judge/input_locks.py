"""One measured run of an input at a time on this machine, across judges (processes) too.

A judge's lanes never run two items with the same input together (`measure._execute`): copies
of one program given one input at once can split its work through a channel between
concurrent runs (docs/security.md §13). Two judges on one machine (two service workers, two
Ray actors, two trainers' reward processes) measuring candidates of one task would meet the
same way, so a lane also holds a lock on its run's input for the run: a file lock in one of
`BUCKETS` files under `$PERFGYM_INPUT_LOCKS` (default /var/tmp/perfgym/input-locks), chosen by
a hash of the input. Two inputs sharing a bucket only wait for each other. A lock that cannot
be had (a directory another user owns) is skipped: the judge's own rule still holds.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: How many lock files inputs are spread over.
BUCKETS = 4096


def root() -> Path:
    return Path(os.environ.get("PERFGYM_INPUT_LOCKS", "/var/tmp/perfgym/input-locks"))


def bucket_of(key: tuple[str, str]) -> Path:
    """The lock file of input `key` (its standard input, its arguments' repr)."""
    digest = hashlib.sha256(repr(key).encode("utf-8", "surrogatepass")).digest()
    return root() / f"{int.from_bytes(digest[:4], 'big') % BUCKETS:04d}.lock"


@contextmanager
def input_held(key: tuple[str, str]) -> Iterator[bool]:
    """Hold the machine-wide lock of input `key` while the block runs; yields whether it is
    held (False: the lock file could not be opened)."""
    path = bucket_of(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except OSError:
        yield False
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield True
    finally:
        os.close(fd)  # releases the lock
