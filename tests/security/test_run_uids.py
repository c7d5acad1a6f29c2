"""Red team helper-75: every run was uid 65534, and the kernel counts POSIX message queue bytes
(and pipe pages, processes) per user, not per namespace: a run that filled what was left read
what a concurrent run held, and two copies of one program swapped halves of the work that
way (RLPF 0.45-0.53 against the honest twin's 0.15). Each run in flight now has a uid of its
own (`sandbox.run_uids`); a control sandbox with the shared uid shows the channel."""

from __future__ import annotations

import os
import tempfile
import threading

from concurrent_runs import hold_and_look

from perfgym.sandbox import SandboxConfig, WarmSandbox, run_uids
from perfgym.sandbox.bind import Bind

MQ = """
import ctypes, os
rt = ctypes.CDLL("librt.so.1", use_errno=True)


class Attr(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long), ("msgsize", ctypes.c_long),
                ("curmsgs", ctypes.c_long), ("pad", ctypes.c_long * 4)]


rt.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(Attr)]


def make(name, size, count):
    attr = Attr(0, count, size, 0)
    return rt.mq_open(name.encode(), os.O_CREAT | os.O_RDWR | os.O_EXCL, 0o600, ctypes.byref(attr))
"""
# Holds four queues of 10 x 8 KiB (about 330 KB of the user's message queue bytes).
HOLD = (
    MQ
    + """
import time
held = sum(make(f"/held{i}", 8192, 10) >= 0 for i in range(4))
print("held", held, flush=True)
time.sleep(float(os.environ["HOLD_S"]))
"""
)
# How many bytes of queues it can make (1 KiB messages, 10 a queue), the least over a while.
LOOK = (
    MQ
    + """
import time
least = None
end = time.monotonic() + float(os.environ["LOOK_S"])
while time.monotonic() < end:
    fds = []
    while len(fds) < 200 and (fd := make(f"/look{len(fds)}", 1024, 10)) >= 0:
        fds.append(fd)
    for i, fd in enumerate(fds):
        os.close(fd)
        rt.mq_unlink(f"/look{i}".encode())
    least = len(fds) if least is None else min(least, len(fds))
    time.sleep(0.05)
print(least)
"""
)


def _looked(config: SandboxConfig) -> int:
    """The queues a looking run could make while a holding run held its own."""
    held, looked = hold_and_look(config, HOLD, 6, LOOK, 3)
    assert held.startswith("held 4"), held
    return int(looked)


def test_a_run_cannot_read_what_a_concurrent_run_holds_per_user() -> None:
    shared = _looked(SandboxConfig(uid_per_run=False))
    own = _looked(SandboxConfig())
    # about 330 KB held: some 30 fewer 10 KiB queues for the looker when it shares the uid
    assert own - shared >= 20, (own, shared)


def test_runs_in_flight_have_uids_of_their_own() -> None:
    with WarmSandbox() as sb:
        out: list[str] = []

        def run() -> None:
            out.append(sb.run(["sh", "-c", "id -u; sleep 0.5"]).stdout_text.strip())

        threads = [threading.Thread(target=run) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    uids = {int(u) for u in out}
    assert len(uids) == 3 and all(u >= run_uids.BASE for u in uids), out
    with WarmSandbox() as sb, tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o777)
        bound = [Bind(host_path=d, sandbox_path="/tmp/out", writable=True)]
        # a run whose files are the next run's (a build) keeps the shared uid
        assert sb.run(["id", "-u"], binds=bound).stdout_text.strip() == "65534"


def test_uids_are_given_back() -> None:
    taken = [run_uids.acquire() for _ in range(run_uids.SLOTS)]
    try:
        assert len(set(taken)) == run_uids.SLOTS
        assert run_uids.acquire() == 65534  # none left: the shared uid
    finally:
        for uid in taken:
            run_uids.release(uid)
    again = run_uids.acquire()
    run_uids.release(again)
    assert again == min(taken)
