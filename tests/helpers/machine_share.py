"""Under pytest-xdist, a test marked `alone` runs while no other test runs; the rest share.

A fair readers-writer lock over two lock files the run's workers share: every test passes a
gate, a shared test holds the machine lock shared, an `alone` test holds the gate and the
machine lock exclusively, so a worker waiting to run alone is not starved by the other
worker's next tests. Without xdist (one process) nothing is locked.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator


def _lock_paths() -> tuple[str, str] | None:
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run or not os.environ.get("PYTEST_XDIST_WORKER"):
        return None
    base = os.path.join(tempfile.gettempdir(), f"perfgym-tests-{run}")
    return base + ".gate", base + ".machine"


#: Fixed when the worker starts: a test that changes TMPDIR does not move the locks.
LOCK_PATHS = _lock_paths()


#: The locks an `alone` test kept for the next one on this worker (gate fd, machine fd).
_kept: tuple[int, int] | None = None


def _release(fds: tuple[int, int]) -> None:
    gate, machine = fds
    # Explicit unlocks: a child forked during the test keeps a copy of these descriptors.
    fcntl.flock(machine, fcntl.LOCK_UN)
    fcntl.flock(gate, fcntl.LOCK_UN)
    os.close(machine)
    os.close(gate)


@contextlib.contextmanager
def machine_share(alone: bool, *, next_alone: bool = False) -> Iterator[None]:
    """Holds this worker's share of the machine for one test (its setup, call and teardown).

    An `alone` test followed by another on this worker (`next_alone`) keeps the machine for it:
    released between them, the other worker would run one test of its own in the gap, and the
    next alone test would wait for all of it (a full run lost ~260 s per worker that way, 86 s
    of it once on a single load test)."""
    global _kept
    if LOCK_PATHS is None:
        yield
        return
    if _kept is not None and not alone:  # a kept hold whose next test was not alone after all
        _release(_kept)
        _kept = None
    if _kept is not None:
        fds, _kept = _kept, None
    else:
        gate = os.open(LOCK_PATHS[0], os.O_RDWR | os.O_CREAT, 0o600)
        machine = os.open(LOCK_PATHS[1], os.O_RDWR | os.O_CREAT, 0o600)
        fds = gate, machine
        try:
            fcntl.flock(gate, fcntl.LOCK_EX)
            fcntl.flock(machine, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
            if not alone:
                fcntl.flock(gate, fcntl.LOCK_UN)
        except BaseException:
            _release(fds)
            raise
    try:
        yield
    except BaseException:
        _release(fds)
        raise
    if alone and next_alone:
        _kept = fds
    else:
        _release(fds)
