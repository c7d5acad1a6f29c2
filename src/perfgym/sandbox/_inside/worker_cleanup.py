"""The warm worker's cleanup after a call: kill what is left of it, empty its writable dirs.

Nothing a call leaves can defeat it: no recursion (depth costs neither stack nor descriptors),
links are never followed, and a cleanup that cannot finish says why, so the worker is
restarted and the call counted as the candidate's failure.
"""

from __future__ import annotations

import _signal
import errno
import os
import time
from collections.abc import Callable

import worker_forget

#: Directories a call can write, emptied after every call.
CLEAN_ROOTS = ("/tmp", "/dev/shm")
#: Entries a call may leave for the cleanup, in all its directories together; more and the
#: worker is restarted instead (a fresh tmpfs is cheaper than deleting millions of files), the
#: call counted as failed.
max_entries = 200_000
#: Seconds to reap the killed processes of a call before the cleanup counts as failed.
REAP_S = 5.0
hoisted = 0  # names given to entries moved up out of a directory being emptied


def clean(reap_exited: Callable[[], int] | None = None) -> tuple[bool, str]:
    """Kill every leftover process of the call and empty the writable directories. Returns
    whether any process was left when the call's main process had ended (a child nobody
    waited for, a daemon) and why the cleanup failed ('' when it did not). `reap_exited`:
    the call's processes are the zygote's, which reaps those that ended when asked (how many);
    otherwise they are this process's."""
    left = False
    deadline = time.monotonic() + REAP_S
    if reap_exited is not None:
        left, why = _clean_the_zygotes(reap_exited, deadline)
        worker_forget.forget()
        return left, why
    for _round in range(100):  # again until nothing is left to signal (a fork racing the kill)
        try:
            os.kill(-1, _signal.SIGKILL)  # every process but this one (PID 1)
            left = True
        except ProcessLookupError:
            break
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    if time.monotonic() > deadline:
                        return left, "a process of the call could not be reaped"
                    time.sleep(0.0005)
            except ChildProcessError:
                break
    why = _empty_roots()
    worker_forget.forget()  # every process of the call gone, its files too
    return left, why


def _clean_the_zygotes(reap_exited: Callable[[], int], deadline: float) -> tuple[bool, str]:
    """`clean` where the zygote (PID 1, never signalled) is the call's processes' parent: kill
    every process but this one and the zygote until none is left (a zombie still counts: the
    kill fails only once every process of the call is reaped)."""
    left = False
    while True:
        try:
            os.kill(-1, _signal.SIGKILL)
        except ProcessLookupError:
            break
        left = True
        if reap_exited() == 0:
            if time.monotonic() > deadline:
                return left, "a process of the call could not be reaped"
            time.sleep(0.0005)
    return left, _empty_roots()


def _empty_roots() -> str:
    try:
        allowed = max_entries
        for root in CLEAN_ROOTS:
            allowed -= empty(root, allowed)
    except Exception as exc:  # noqa: BLE001 - whatever stops the cleanup, the worker goes
        return f"{type(exc).__name__}: {exc}"[:500]
    return ""


def empty(root: str, allowed: int | None = None) -> int:
    """Remove everything in `root`, never following a link and without recursion: a directory
    that is not empty has its entries moved up into `root` first, so neither depth nor path
    length costs stack, descriptors or PATH_MAX. Returns the entries removed; OSError when
    anything stays, or when there were more than `allowed` (default `max_entries`)."""
    global hoisted
    if allowed is None:
        allowed = max_entries
    try:
        rfd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return 0
    seen = 0
    try:
        todo = os.listdir(rfd)
        if not todo:
            # Nothing to remove, and nothing can appear: every process of the call is gone
            # (`clean` killed and reaped them first). Most calls leave nothing: a second
            # listing cost 8 system calls per directory.
            return 0
        while todo:
            name = todo.pop()
            seen += 1
            if seen > allowed:
                raise OSError(f"the call left more than {max_entries} entries in /tmp and "
                              "/dev/shm")  # fmt: skip
            try:
                mode = os.stat(name, dir_fd=rfd, follow_symlinks=False).st_mode
            except FileNotFoundError:
                continue
            if mode & 0o170000 != 0o040000:  # not a directory: a file, link, FIFO, socket...
                os.unlink(name, dir_fd=rfd)
                continue
            try:
                os.rmdir(name, dir_fd=rfd)
                continue
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                    raise
            dfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=rfd)
            try:
                for child in os.listdir(dfd):
                    while True:
                        hoisted += 1
                        new = f".pgw-{hoisted}"
                        try:
                            os.rename(child, new, src_dir_fd=dfd, dst_dir_fd=rfd)
                            break
                        except OSError as exc:  # the name is taken: take the next
                            if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.EISDIR,
                                                 errno.ENOTDIR):  # fmt: skip
                                raise
                    todo.append(new)
            finally:
                os.close(dfd)
            todo.append(name)  # empty now: removed on its next turn
        stayed = os.listdir(rfd)
        if stayed:
            raise OSError(f"{len(stayed)} entries stayed in {root}")
    finally:
        os.close(rfd)
    return seen
