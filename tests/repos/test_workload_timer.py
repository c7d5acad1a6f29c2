"""The workload timer's receive loop: a runner that exits with one of the timer's replies unread
(its tags were written by the workload itself, which never reads the answers) makes the kernel
report ECONNRESET ahead of the messages still queued. The timer reads on and gets them: on a
busy machine the runner had often exited before the timer read its last message, and the run
failed as a crash instead of being measured (CI, test_own_phase_tags_in_order...)."""

from __future__ import annotations

import socket

from perfgym.repos._inside import workload_timer


def _pair() -> tuple[socket.socket, socket.socket]:
    return socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)


def test_queued_messages_are_read_after_the_peer_closed_with_a_reply_unread() -> None:
    mine, theirs = _pair()
    theirs.send(b"H0123\n")
    theirs.send(b'D{"first_s": 0.0}\n')
    mine.send(b"k")  # the timer's answer, never read
    theirs.close()
    assert workload_timer._receive(mine)[0] == b"H0123\n"
    assert workload_timer._receive(mine)[0] == b'D{"first_s": 0.0}\n'
    assert workload_timer._receive(mine)[0] == b""  # every holder closed it: the end
    mine.close()


def test_a_reset_with_nothing_queued_is_the_end() -> None:
    mine, theirs = _pair()
    mine.send(b"k")
    theirs.close()
    assert workload_timer._receive(mine)[0] == b""
    mine.close()
