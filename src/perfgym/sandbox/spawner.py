"""Starting long-lived sandbox processes from one thread that lives as long as the process.

bubblewrap's --die-with-parent uses PR_SET_PDEATHSIG, which fires when the *thread* that
forked it exits, not the process. A launcher or worker started from a short-lived pool thread
would die with that thread, taking every run in flight with it. Everything long-lived is
therefore started here.
"""

from __future__ import annotations

import queue
import subprocess
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")

_jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
_thread: threading.Thread | None = None
_lock = threading.Lock()


def _serve() -> None:
    while True:
        fn, fut = _jobs.get()
        if fut.set_running_or_notify_cancel():
            try:
                fut.set_result(fn())
            except BaseException as exc:  # noqa: BLE001 - handed to the caller as is
                fut.set_exception(exc)


def on_stable_thread(fn: Callable[[], T]) -> T:
    """Run `fn` on the process-lifetime spawner thread and return its result."""
    global _thread
    with _lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_serve, name="perfgym-spawner", daemon=True)
            _thread.start()
    if threading.current_thread() is _thread:
        return fn()
    fut: Future[T] = Future()
    _jobs.put((fn, fut))
    return fut.result()


def popen(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
    """`subprocess.Popen` started from the spawner thread (see the module docstring)."""
    return on_stable_thread(lambda: subprocess.Popen(*args, **kwargs))
