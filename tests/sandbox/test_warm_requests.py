"""The warm launcher's request message: a small spec travels in the message, a large one as a
memfd, and a malformed message is dropped (its descriptors closed) without costing a run."""

import array
import json
import os
import select
import socket
import sys

import pytest

from perfgym.sandbox import Status
from perfgym.sandbox.view import INSIDE
from perfgym.sandbox.warm import INLINE_SPEC_BYTES, WarmSandbox


@pytest.fixture(scope="module")
def warm():
    sb = WarmSandbox()
    yield sb
    sb.close()


def test_small_and_large_specs_both_arrive_whole(warm):
    small = warm.run(["cat", "a.txt"], files={"a.txt": "small"})
    assert small.status is Status.OK and small.stdout == b"small"
    big = os.urandom(INLINE_SPEC_BYTES).hex()  # twice the inline limit, base64'd on top
    ex = warm.run(["sh", "-c", "wc -c < b.txt; head -c 16 b.txt"], files={"b.txt": big})
    assert ex.status is Status.OK, ex.reason
    assert ex.stdout.split() == [str(len(big)).encode(), big[:16].encode()]


def _send_raw(warm: WarmSandbox, header: bytes, fds: list[int]) -> None:
    sock = warm._ensure_started()
    sock.sendmsg([header], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])


def _closed_within(fd: int, seconds: float) -> bool:
    """Whether the write end of the pipe read at `fd` is closed everywhere (EOF) in time."""
    ready, _, _ = select.select([fd], [], [], seconds)
    return bool(ready) and os.read(fd, 1) == b""


@pytest.mark.parametrize(
    "header, extra",
    [
        (b"not json", 0),
        (b'{"fds": ["result"]}', 0),  # neither an inline spec nor a spec memfd
        (b'{"fds": ["result", "result"], "spec": {}}', 1),  # a name twice
        (b'{"fds": ["result", "bogus"], "spec": {}}', 1),  # an unknown name
        (b'{"fds": ["result", "cpu"], "spec": {}}', 0),  # more names than descriptors
        (b'{"fds": "result", "spec": {}}', 0),  # not a list
        (b'{"fds": ["result", "spec"], "spec": {"argv": ["true"]}}', 1),  # both ways at once
        (b'{"fds": ["result"], "spec": ' + b"1" * 70_000 + b"}", 0),  # over what a spare reads
    ],
)
def test_a_malformed_request_is_dropped_and_the_next_run_is_served(warm, header, extra):
    r, w = os.pipe()
    others = [os.open(os.devnull, os.O_RDONLY) for _ in range(extra)]
    try:
        _send_raw(warm, header, [w, *others])
    finally:
        os.close(w)
        for fd in others:
            os.close(fd)
    try:
        assert _closed_within(r, 10)  # the spare closed what it was sent, and kept waiting
    finally:
        os.close(r)
    ex = warm.run(["echo", "served"])
    assert ex.status is Status.OK and ex.stdout == b"served\n"
    assert warm.restarts == 0


def test_a_spec_that_is_not_a_run_is_the_sandboxs_error_not_a_hang(warm):
    """A well-formed message whose spec the supervisor cannot use: the spare answers with a
    sandbox error on the result pipe, and the launcher goes on."""
    r, w = os.pipe()
    try:
        _send_raw(warm, json.dumps({"fds": ["result"], "spec": {"argv": 3}}).encode(), [w])
    finally:
        os.close(w)
    try:
        ready, _, _ = select.select([r], [], [], 10)
        assert ready
        data = b""
        while chunk := os.read(r, 65536):
            data += chunk
        assert b"sandbox_error" in data[8:]
    finally:
        os.close(r)
    assert warm.run(["true"]).status is Status.OK


SIZES = """import os
for path in ('/tmp', '/dev/shm'):
    st = os.statvfs(path)
    print(path, st.f_blocks * st.f_frsize, 'nosuid' if st.f_flag & os.ST_NOSUID else 'suid',
          'nodev' if st.f_flag & os.ST_NODEV else 'dev', len(os.listdir(path)))
"""


def _sizes(warm, limits):
    ex = warm.run(["python3", "-c", SIZES], limits=limits)
    assert ex.status is Status.OK, ex.stderr_text
    return [line.split()[1:] for line in ex.stdout_text.splitlines()]


def test_the_work_dir_a_spare_mounted_early_is_resized_to_what_the_run_asks(warm):
    """A spare mounts /tmp and /dev/shm at the default run's sizes before its request; a run
    that asks for another size gets it (remounted, still nosuid and nodev, still empty), and
    the next default run gets the default again."""
    from perfgym.sandbox import Limits
    from perfgym.sandbox.base import private_mounts

    default = Limits()
    small = Limits(disk_bytes=1 << 20)
    for limits in (default, small, default, small):
        want = [str(size) for _path, size in private_mounts(limits.disk_bytes)]
        got = _sizes(warm, limits)
        assert [g[0] for g in got] == want, (limits.disk_bytes, got)
        assert all(g[1:] == ["nosuid", "nodev", "0"] for g in got), got  # and empty


def test_a_header_nested_past_the_recursion_limit_is_dropped_with_its_descriptors() -> None:
    """The spare's parse of a request (red team helper-68: a RecursionError escaped it and left
    the received descriptor open; in a spare it ended the spare, in the launcher's refusal path
    it would have ended the launcher)."""
    sys.path.insert(0, str(INSIDE))
    try:
        import launcher
    finally:
        sys.path.remove(str(INSIDE))
    r, w = os.pipe()
    try:
        rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [w]).tobytes())]
        assert launcher._parse(b"[" * 60_000, rights, 0) == ({}, None)
        assert _closed_within(r, 1)  # the received descriptor was closed
    finally:
        os.close(r)
