"""Red team rt66 (the warm sandbox after its spares began preparing before their request):
each break it found, replayed against the fix.

B1 a spare held in its set-up starved every other run (the launcher learned it was taken only
   once its program ran); B2 pooled cgroups' cumulative counters carried a number from one run
   to a later one; B3 every run of a launcher shared one network namespace; B4 the program's
   stdin was a writable memfd left out of its memory, and xattrs escaped the disk quota;
   B5 request input the supervisor could not act on became the sandbox's error.
"""

import array
import json
import os
import socket
import threading
import time

import pytest

from perfgym.errors import ConfigError
from perfgym.sandbox import BwrapSandbox, Limits, SandboxConfig, Status, WarmSandbox
from perfgym.sandbox.base import private_mounts
from perfgym.sandbox.pyworker import PythonWorkerPool
from perfgym.sandbox.request import build_spec
from perfgym.sandbox.run_request import make_request


@pytest.fixture(scope="module")
def warm():
    sb = WarmSandbox()
    yield sb
    sb.close()


def _held_request(warm: WarmSandbox) -> tuple[int, int]:
    """Send a request whose set-up blocks (its cgroup peak file is the write end of a full
    pipe) until that pipe's read end goes; (that read end, the result pipe's read end)."""
    request = make_request(["true"], stdin=b"", files=None, env=None, limits=None, binds=(),
                           collect=(), cpu=None, hide=())  # fmt: skip
    spec = build_spec(request, stdin=b"", sample_rate_hz=500.0, cgroup=None, exec_stub=None)
    spec["cgroups"] = {"memory": "/nonexistent"}
    spec["view"] = {"mounts": private_mounts(request.limits.disk_bytes), "binds": [], "hide": []}
    usage = os.memfd_create("usage")
    os.write(usage, b"0")
    full_r, full_w = os.pipe()
    os.set_blocking(full_w, False)
    try:
        while True:
            os.write(full_w, b"x" * 65536)
    except BlockingIOError:
        pass
    os.set_blocking(full_w, True)
    result_r, result_w = os.pipe()
    names = ["result", "usage", "peak"]
    header = json.dumps({"fds": names, "spec": spec}).encode()
    fds = array.array("i", [result_w, usage, full_w])
    warm._ensure_started().sendmsg([header], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
    for fd in (result_w, usage, full_w):
        os.close(fd)
    return full_r, result_r


def test_b1_spares_held_in_their_set_up_do_not_starve_other_runs(warm):
    assert warm.run(["true"]).status is Status.OK
    held = [_held_request(warm) for _ in range(4)]  # more than the launcher keeps idle
    try:
        t0 = time.monotonic()
        ex = warm.run(["echo", "served"], limits=Limits(wall_s=5))
        assert ex.status is Status.OK and ex.stdout == b"served\n", ex.reason
        assert time.monotonic() - t0 < 20  # served by a replacement, not after the held ones
    finally:
        for full_r, result_r in held:
            os.close(full_r)  # the held spares' writes fail, and they go on and end
            os.close(result_r)
    assert warm.run(["true"]).status is Status.OK


#: rt66 left a TCP socket in TIME_WAIT on loopback, which an earlier launcher's later runs read
#: back from /proc/net/tcp. Runs without network now open no AF_INET socket at all (loopback
#: TCP buffers were RAM their memory cgroup missed: red team helper-87, helper-88).
WRITER = """
import socket
try:
    socket.socket()
    print("opened")
except OSError as e:
    print(e.errno)
"""
COUNT = """
print(sum(1 for line in open("/proc/net/tcp").read().splitlines()[1:]))
"""


def test_b3_each_run_has_a_network_namespace_of_its_own_and_no_inet_socket(warm):
    first = warm.run(["python3", "-c", WRITER])
    assert first.status is Status.OK, first.stderr_text
    assert first.stdout_text.strip() == "97"  # EAFNOSUPPORT: refused by the seccomp filter
    later = warm.run(["python3", "-c", COUNT])
    assert later.stdout_text.strip() == "0", later.stdout_text  # no socket of anyone's


SERVER = """
import socket
s = socket.socket(socket.AF_UNIX); s.bind("\\0perfgym-rt66"); s.listen(1); s.settimeout(4)
try:
    c, _ = s.accept(); c.sendall(b"met"); print("met")
except OSError:
    print("alone")
"""
CLIENT = """
import socket, time
for _ in range(100):
    try:
        c = socket.socket(socket.AF_UNIX); c.connect("\\0perfgym-rt66"); print(c.recv(9).decode()); break
    except OSError:
        time.sleep(0.03)
else:
    print("alone")
"""


def test_b3_concurrent_runs_cannot_reach_each_others_abstract_sockets(warm):
    got = {}

    def serve() -> None:
        got["server"] = warm.run(["python3", "-c", SERVER], limits=Limits(wall_s=10))

    t = threading.Thread(target=serve)
    t.start()
    client = warm.run(["python3", "-c", CLIENT], limits=Limits(wall_s=10))
    t.join()
    assert client.stdout_text.strip() == "alone", client.stdout_text
    assert got["server"].stdout_text.strip() == "alone"


CGROUP_LOOK = """
import os
print(sorted(os.path.join(d, f) for d, _, fs in os.walk("/sys/fs/cgroup") for f in fs))
"""
#: All a warm run sees there: its own CPU counter (the workload timer's; reset before every run).
OWN = "['/sys/fs/cgroup/perfgym-run/cpuacct.usage']"


@pytest.mark.parametrize("backend", ["warm", "bwrap"])
def test_b2_a_run_sees_no_cgroup_files_and_is_still_measured_by_its_cgroup(warm, backend):
    if warm.cgroup_version is None:
        pytest.skip("no writable cgroup hierarchy")
    if backend == "bwrap":  # a fresh cgroup per cold run; none of them shown
        with BwrapSandbox() as cold:
            ex = cold.run(["python3", "-c", CGROUP_LOOK + "x = bytearray(40 << 20)"], cpu=0)
        assert ex.stdout_text.strip() == "[]", ex.stdout_text + ex.stderr_text
    else:
        ex = warm.run(["python3", "-c", CGROUP_LOOK + "x = bytearray(40 << 20)"], cpu=0)
    assert ex.status is Status.OK, ex.stderr_text
    assert ex.stdout_text.strip() in ("[]", OWN), ex.stdout_text
    m = ex.measurement
    assert m.cpu_cgroup_s is not None and m.cpu_cgroup_s > 0
    assert m.peak_rss_mb >= 40
    assert "cpuset" in m.mechanisms["core"]  # joined the core's cpuset through its descriptor


PIDS_EVENTS = """
import os
fails = 0
kids = []
while fails < 7:
    try:
        pid = os.fork()
    except OSError:
        fails += 1
        continue
    if pid == 0:
        import time; time.sleep(5); os._exit(0)
    kids.append(pid)
for k in kids:
    os.kill(k, 9)
print(fails)
"""


def test_b2_failed_forks_leave_no_number_a_later_run_can_read(warm):
    if warm.cgroup_version is None:
        pytest.skip("no writable cgroup hierarchy")
    ex = warm.run(["python3", "-c", PIDS_EVENTS], limits=Limits(max_processes=8, wall_s=20))
    assert ex.stdout_text.strip() == "7", ex.stdout_text + ex.stderr_text
    later = warm.run(["python3", "-c", CGROUP_LOOK])
    assert later.stdout_text.strip() == OWN, later.stdout_text  # no pids.events


def test_b2_a_worker_call_sees_no_cgroup_files():
    code = "import os\ndef look():\n    return os.listdir('/sys/fs/cgroup')\n"
    with PythonWorkerPool(size=1) as pool:
        r = pool.call(code, "look", [])
    assert r.status is Status.OK and r.value == [], r


def test_b4_the_programs_stdin_cannot_be_written(warm):
    code = "import os\ntry:\n    os.write(0, b'x' * 4096); print('wrote')\nexcept OSError as e:\n    print('refused', e.errno)\n"
    for stdin in (b"", b"input"):
        ex = warm.run(["python3", "-c", code], stdin=stdin)
        assert ex.stdout_text.startswith("refused"), (stdin, ex.stdout_text)


XATTRS = """
import os
n = 0
open("/tmp/f", "wb").close()
try:
    for i in range(400):
        os.setxattr("/tmp/f", f"user.k{i}", b"v" * 60000); n += 60000
except OSError as e:
    print("stopped", n >> 20)
else:
    print("held", n >> 20)
"""


def test_b4_xattrs_count_against_the_disk_quota_without_a_cgroup():
    with WarmSandbox(SandboxConfig(use_cgroups=False)) as sb:
        ex = sb.run(["python3", "-c", XATTRS], limits=Limits(disk_bytes=1 << 20))
    assert ex.stdout_text.startswith("stopped"), ex.stdout_text + ex.stderr_text
    assert int(ex.stdout_text.split()[1]) <= 2


@pytest.mark.parametrize(
    "kw",
    [
        dict(command=["echo", "\ud800"]),
        dict(command=["true"], env={"X": "\udfff"}),
        dict(command=["true"], files={"x/": "a"}),
        dict(command=["true"], files={".": "a"}),
        dict(command=["true"], files={"a/./b": "a"}),
        dict(command=["true"], files={"a": "x", "a/b": "y"}),
        dict(command=["true"], files={"a/" * 100 + "f": "y"}),
        dict(command=["true"], files={"n" * 300: "y"}),
        dict(command=["true"], collect=["a//b"]),
    ],
)
def test_b5_input_the_supervisor_cannot_act_on_is_the_callers_error(warm, kw):
    command = kw.pop("command")
    with pytest.raises(ConfigError):
        warm.run(command, **kw)


def test_b5_honest_names_still_pass(warm):
    files = {"a/b/c.txt": "1", "a/b/d.txt": "2", "a/e.txt": "3", "ü.txt": "4"}
    ex = warm.run(["sh", "-c", "cat a/b/c.txt a/b/d.txt a/e.txt ü.txt"], files=files)
    assert ex.stdout == b"1234"
