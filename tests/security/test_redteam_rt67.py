"""Red team rt67 (the rt66 fixes): each break it found, replayed against the fix.

A program made a user namespace of its own and mounted its own pooled cgroup's hierarchy past
the cover over /sys/fs/cgroup (never-reset high-water marks and fault totals of earlier runs),
or an unsized tmpfs past the disk quota where no cgroup held memory; a worker's calls shared a
network namespace (a TCP socket's TIME_WAIT carried a message to a later call); concurrent warm
runs shared one devpts instance (one opened the other's pseudo-terminal).
"""

import itertools
import threading

import pytest
from bpf import run_bpf

from perfgym.sandbox import BwrapSandbox, Limits, Status, WarmSandbox, seccomp
from perfgym.sandbox.pyworker import PythonWorkerPool

USERNS = """
import ctypes, os, subprocess, threading
libc = ctypes.CDLL(None, use_errno=True)
print("unshare", libc.unshare(0x10000000), ctypes.get_errno())
t = threading.Thread(target=print, args=("thread",)); t.start(); t.join()
print(subprocess.run(["echo", "spawned"], capture_output=True, text=True).stdout.strip())
pid = os.fork()
if pid == 0:
    os._exit(7)
print("forked", os.waitpid(pid, 0)[1] >> 8)
"""


@pytest.mark.parametrize("backend", [WarmSandbox, BwrapSandbox], ids=["warm", "bwrap"])
def test_no_run_can_make_a_user_namespace_and_processes_still_start(backend):
    with backend() as sb:
        ex = sb.run(["python3", "-c", USERNS])
    assert ex.status is Status.OK, ex.stderr_text
    assert ex.stdout_text.split("\n")[:4] == ["unshare -1 1", "thread", "spawned", "forked 7"]


CALL = """
import ctypes, socket, threading
def probe():
    out = {}
    for name, family in (("inet", socket.AF_INET), ("inet6", socket.AF_INET6),
                         ("unix", socket.AF_UNIX)):
        try:
            socket.socket(family).close()
            out[name] = "ok"
        except OSError as e:
            out[name] = e.errno
    a, b = socket.socketpair()
    a.sendall(b"x")
    out["pair"] = b.recv(1).decode()
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
    out["userns"] = ctypes.CDLL(None, use_errno=True).unshare(0x10000000)
    return out
"""


def test_a_worker_call_opens_no_inet_socket_and_makes_no_user_namespace():
    import errno

    with PythonWorkerPool(size=1) as pool:
        r = pool.call(CALL, "probe", [])
    assert r.status is Status.OK, r.error
    assert r.value == {"inet": errno.EAFNOSUPPORT, "inet6": errno.EAFNOSUPPORT, "unix": "ok",
                       "pair": "x", "userns": -1}  # fmt: skip


HOLD_PTY = """
import os, pty, time
try:
    m, s = pty.openpty()
    print(os.ttyname(s), flush=True)
except OSError as exc:
    print("no pty:", exc, flush=True)
time.sleep(3)
"""
LOOK_PTY = "import os, time; time.sleep(1); print(sorted(os.listdir('/dev/pts')))"


def test_concurrent_warm_runs_do_not_share_pseudo_terminals():
    with WarmSandbox() as sb:
        got = {}

        def hold() -> None:
            got["holder"] = sb.run(["python3", "-c", HOLD_PTY], limits=Limits(wall_s=10))

        t = threading.Thread(target=hold)
        t.start()
        looker = sb.run(["python3", "-c", LOOK_PTY], limits=Limits(wall_s=10))
        t.join()
    # no pty opens at all now (helper-76: the host's count of ptys was a channel of its own)
    assert got["holder"].stdout_text.startswith("no pty"), got["holder"].stdout_text
    assert looker.stdout_text.strip() == "['ptmx']", looker.stdout_text


PTY_COUNT = """
import os, pty
try:
    pty.openpty()
    print("pty")
except OSError:
    print("none")
"""


def test_no_backend_opens_a_pseudo_terminal():
    """Every pty on the host moves one number every run can read (`kernel.pty.nr`): a run
    that could open ptys could signal a concurrent run through it, step by step."""
    for sb in (WarmSandbox(), BwrapSandbox()):
        with sb:
            assert sb.run(["python3", "-c", PTY_COUNT]).stdout_text.strip() == "none"
    pool = PythonWorkerPool(size=1)
    try:
        source = "import pty\ndef f():\n    try:\n        pty.openpty()\n        return 'pty'\n" \
                 "    except OSError:\n        return 'none'\n"  # fmt: skip
        assert pool.call(source, "f", []).value == "none"
    finally:
        pool.close()


ALLOW, ENOSYS, EPERM = 0x7FFF0000, 0x00050000 | 38, 0x00050000 | 1
EAFNOSUPPORT = 0x00050000 | 97
NEWUSER, NEWNS = 0x10000000, 0x00020000


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_filter_decides_each_abi_alike(machine):
    abis = dict(seccomp.ARCHES[machine])
    for inet, ptrace in itertools.product((False, True), repeat=2):
        prog = seccomp.program(machine, refuse_ptrace=ptrace, refuse_inet=inet)
        for arch in abis:
            unshare, clone = seccomp.NAMESPACE_CALLS[arch][:2]
            assert run_bpf(prog, arch, unshare, NEWUSER) == EPERM
            assert run_bpf(prog, arch, unshare, NEWUSER | NEWNS) == EPERM
            assert run_bpf(prog, arch, unshare, NEWNS) == ALLOW
            assert run_bpf(prog, arch, clone, 0x01200011) == ALLOW  # glibc fork's flags
            assert run_bpf(prog, arch, clone, NEWUSER) == EPERM
            assert run_bpf(prog, arch, 435, 0) == ENOSYS  # clone3: flags unreadable
            for nr in abis[arch]:
                assert run_bpf(prog, arch, nr, 0) == ENOSYS
            for nr in seccomp.SOCKET_CALLS[arch]:
                refused = [(d, EAFNOSUPPORT) for d in (2, 10, 16, 17, 40)]  # inet, netlink, ...
                for domain, want in [(1, ALLOW), *refused]:
                    assert run_bpf(prog, arch, nr, domain) == (want if inet else ALLOW)
            for nr in seccomp.PTRACE[arch]:
                assert run_bpf(prog, arch, nr, 0) == (ENOSYS if ptrace else ALLOW)
            assert run_bpf(prog, arch, 0, 0) == ALLOW  # read (x86-64), io_setup (arm64) ...
        assert run_bpf(prog, 0x12345, 0, 0) == ENOSYS  # an architecture not known here
