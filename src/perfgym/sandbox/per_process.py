"""`PerProcess`: one lazily started sandbox resource per process, closed at exit by its starter.

Task code (checkers, generators) runs in sandboxes the judge's process starts on first use. A
forked process (a service worker, a Ray actor) must get its own, and a forked child that exits
must never close what its parent started: `atexit` runs in the child too.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar


class _Closable(Protocol):
    def close(self) -> None: ...


T = TypeVar("T", bound=_Closable)


class PerProcess(Generic[T]):
    """`get()` returns this process's instance, made by `factory` on first use."""

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._made: dict[int, T] = {}
        self._lock = threading.Lock()

    def get(self) -> T:
        pid = os.getpid()
        with self._lock:
            thing = self._made.get(pid)
            if thing is None:
                thing = self._made[pid] = self._factory()
                atexit.register(_close_in, pid, thing)
            return thing

    def if_started(self) -> T | None:
        """This process's instance, or None when nothing here asked for one yet."""
        with self._lock:
            return self._made.get(os.getpid())


def _close_in(pid: int, thing: _Closable) -> None:
    if os.getpid() == pid:
        thing.close()
