"""One measured run of an input at a time on this machine, across judges (processes) too.

A judge's lanes never run two items with the same input together (`measure._execute`): copies
of one program given one input at once can split its work through a channel between
concurrent runs (docs/security.md §13). Two judges on one machine (two service workers, two
Ray actors, two trainers' reward processes) measuring candidates of one task would meet the
same way, so a lane also holds a lock on its run's input for the run: a file lock in one of
`BUCKETS` files under `$PERFGYM_INPUT_LOCKS` (default /var/tmp/perfgym/input-locks), chosen by
a hash of the input. Two inputs sharing a bucket only wait for each other. A lock that cannot
be had (a directory another user owns, a lock held past `WAIT_S`) is skipped, said once in
the log: the judge's own rule still holds.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

log = logging.getLogger(__name__)

#: How many lock files inputs are spread over.
BUCKETS = 4096


def root() -> Path:
    return Path(os.environ.get("PERFGYM_INPUT_LOCKS", "/var/tmp/perfgym/input-locks"))


def bucket_of(key: tuple[str, str]) -> Path:
    """The lock file of input `key` (its standard input, its arguments' repr)."""
    digest = hashlib.sha256(repr(key).encode("utf-8", "surrogatepass")).digest()
    return root() / f"{int.from_bytes(digest[:4], 'big') % BUCKETS:04d}.lock"


#: The longest a run waits for another judge's run of its input (a run's wall backstop is
#: far shorter); past it, it runs anyway and says so (a lock held by a stuck process).
WAIT_S = 600.0
_POLL_S = 0.01
_warned: set[str] = set()


def _warn_once(what: str) -> None:
    if what not in _warned:
        _warned.add(what)
        log.warning("%s", what)


@contextmanager
def input_held(key: tuple[str, str]) -> Iterator[bool]:
    """Hold the machine-wide lock of input `key` while the block runs; yields whether it is
    held (False, said once in the log: the lock file could not be opened, or another process
    held it past `WAIT_S`)."""
    path = bucket_of(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        _warn_once(f"input locks under {path.parent} unusable ({exc}): another judge on this "
                   "machine may run an input beside this one's")  # fmt: skip
        yield False
        return
    try:
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = True
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    _warn_once(f"input lock {path} held over {WAIT_S:g} s by another process: "
                               "running without it")  # fmt: skip
                    held = False
                    break
                time.sleep(_POLL_S)
        yield held
    finally:
        os.close(fd)  # releases the lock
