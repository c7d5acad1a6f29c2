"""One layout of open descriptors for a test's process and a workload's (stdlib only; shipped
into both as `perfgym_fd_layout`): 0-2 the standard streams, 4 the write end of a pipe, 5 a
SOCK_SEQPACKET socket, both closed to children; nothing else.

Each process has one channel to its parent: the tests' outcome records go over a pipe, a
workload's phase messages over a socket. Before, each had only its own, at a number the kernel
happened to give it, so a patch listing its descriptors (red team helper-116: `os.stat(fd)` for
each number, a FIFO only under test) told one process from the other. Each parent now passes its
child a spare of the other kind as well, and both children settle the two at the same numbers.
"""

import os

#: The numbers the two descriptors end at (pipe, socket).
PIPE_FD = 4
SOCKET_FD = 5
#: Where they wait on the way there (free in a process that has just started).
_PARKED = 20


def settle(pipe_fd, socket_fd):
    """Move `pipe_fd` to PIPE_FD and `socket_fd` to SOCKET_FD, both closed on exec; returns
    (PIPE_FD, SOCKET_FD)."""
    pairs = ((pipe_fd, PIPE_FD), (socket_fd, SOCKET_FD))
    for i, (src, _dst) in enumerate(pairs):
        os.dup2(src, _PARKED + i, inheritable=False)
        os.close(src)
    for i, (_src, dst) in enumerate(pairs):
        os.dup2(_PARKED + i, dst, inheritable=False)
        os.close(_PARKED + i)
    return PIPE_FD, SOCKET_FD


def identity(fd, _fstat=os.fstat):
    """(device, inode) of what `fd` is open on, or None: a descriptor moved under a process
    shows up as another identity (`outcome_plugin` checks its record pipe and stdout so)."""
    try:
        st = _fstat(fd)
    except OSError:
        return None
    return st.st_dev, st.st_ino
