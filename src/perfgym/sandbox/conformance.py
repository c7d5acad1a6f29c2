"""`check_sandbox(backend)`: the conformance suite every sandbox backend must pass.

Each check runs real programs (attacks and ground-truth measurements) through the backend and
asserts containment, status and measurement. Local, HTTP-service and Ray backends all run it.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from perfgym.errors import PerfgymError
from perfgym.sandbox.base import Sandbox
from perfgym.sandbox.execution import Execution, Status
from perfgym.sandbox.limits import Limits

PY = os.path.realpath(sys.executable)


class ConformanceError(PerfgymError, AssertionError):
    """A backend broke a sandbox guarantee."""


@dataclass(frozen=True)
class Check:
    name: str
    fn: Callable[[Sandbox], None]


def _expect(cond: bool, what: str, ex: Execution | None = None) -> None:
    if not cond:
        extra = ""
        if ex is not None:
            extra = (
                f" [status={ex.status.value} reason={ex.reason!r} exit={ex.exit_code} "
                f"signal={ex.signal} stderr={ex.stderr_text[-400:]!r}]"
            )
        raise ConformanceError(what + extra)


def _host_procs_with(token: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if token.encode() in f.read():
                    found.append(int(name))
        except OSError:
            continue
    return found


def _py(
    sb: Sandbox, code: str, limits: Limits | None = None, **kw: object
) -> tuple[Execution, str]:
    """Run `code` as a script whose file name carries a unique token (to find leftovers)."""
    token = f"pgtok{uuid.uuid4().hex[:12]}"
    ex = sb.run([PY, f"{token}.py"], files={f"{token}.py": code}, limits=limits, **kw)  # type: ignore[arg-type]
    return ex, token


def _no_leftovers(token: str) -> None:
    deadline = time.monotonic() + 3.0
    while _host_procs_with(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = _host_procs_with(token)
    _expect(not left, f"processes outlived their run: {left}")


# -- attacks ---------------------------------------------------------------------------------
def fork_bomb(sb: Sandbox) -> None:
    code = (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    )
    ex, tok = _py(sb, code, Limits(wall_s=3, max_processes=32))
    _expect(ex.status in (Status.RUNTIME_ERROR, Status.TIMEOUT), "fork bomb not stopped", ex)
    _expect(ex.measurement is not None and ex.measurement.max_processes_seen <= 64,
            "fork bomb exceeded the process limit", ex)  # fmt: skip
    _no_leftovers(tok)


def memory_bomb(sb: Sandbox) -> None:
    code = "x = []\nwhile True:\n    x.append(bytearray(50 * 2**20))\n"
    ex, tok = _py(sb, code, Limits(wall_s=10, memory_mb=200))
    _expect(ex.status is Status.MEMORY_LIMIT, "memory bomb not reported as MEMORY_LIMIT", ex)
    _no_leftovers(tok)


def slow_memory_bomb(sb: Sandbox) -> None:
    code = "import time\nx = []\nwhile True:\n    x.append(bytearray(8 * 2**20))\n    time.sleep(0.02)\n"
    ex, tok = _py(sb, code, Limits(wall_s=15, memory_mb=160))
    _expect(ex.status is Status.MEMORY_LIMIT, "slowly growing memory not stopped", ex)
    _no_leftovers(tok)


def ignores_sigterm(sb: Sandbox) -> None:
    code = "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    pass\n"
    t0 = time.monotonic()
    ex, tok = _py(sb, code, Limits(wall_s=1.5))
    _expect(ex.status is Status.TIMEOUT, "busy loop ignoring SIGTERM not timed out", ex)
    _expect(time.monotonic() - t0 < 8, "timeout took far longer than the wall limit")
    _no_leftovers(tok)


def cpu_limit_enforced(sb: Sandbox) -> None:
    """A busy loop is stopped at its CPU limit, well before a long wall limit."""
    t0 = time.monotonic()
    ex, tok = _py(sb, "while True:\n    pass\n", Limits(wall_s=30, cpu_s=1))
    _expect(ex.status is Status.TIMEOUT, "busy loop not stopped at its CPU limit", ex)
    _expect("CPU time over" in ex.reason, f"stopped for another reason: {ex.reason!r}", ex)
    _expect(time.monotonic() - t0 < 20, "CPU limit took far longer than the CPU limit")
    _no_leftovers(tok)


def process_clock_is_fine_grained(sb: Sandbox) -> None:
    """The run's own CPU clock moves by less than a scheduler tick (harnesses time themselves
    with clock()/process_time(): an armed RLIMIT_CPU would make it move only at ticks)."""
    code = (
        "import resource, time\n"
        "deltas = []\n"
        "for _ in range(20):\n"
        "    a = time.process_time_ns()\n"
        "    x = sum(range(2000))\n"
        "    deltas.append(time.process_time_ns() - a)\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_CPU)\n"
        "print(sorted(deltas)[10], soft == resource.RLIM_INFINITY)\n"
    )
    ex, _ = _py(sb, code, Limits(wall_s=20))
    _expect(ex.status is Status.OK, "clock probe failed", ex)
    median_ns, unlimited = ex.stdout.decode().split()
    _expect(unlimited == "True", "the run has an RLIMIT_CPU armed", ex)
    _expect(0 < int(median_ns) < 1_000_000, f"process clock moved {median_ns} ns for ~50 us", ex)


def sleeps_past_wall(sb: Sandbox) -> None:
    ex, tok = _py(sb, "import time\ntime.sleep(30)\n", Limits(wall_s=1.0))
    _expect(ex.status is Status.TIMEOUT, "idle sleeper not timed out", ex)
    m = ex.measurement
    _expect(m is not None and m.wall_s >= 1.0 and m.cpu_s < 0.5, "sleeper timing wrong", ex)
    _no_leftovers(tok)


def double_fork_escape(sb: Sandbox) -> None:
    code = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(30)\n"
        "    os._exit(0)\n"
        "os.wait()\nprint('parent done')\n"
    )
    ex, tok = _py(sb, code, Limits(wall_s=5))
    _expect(ex.status is Status.OK and b"parent done" in ex.stdout, "double-fork run failed", ex)
    _no_leftovers(tok)


def loopback_connect(sb: Sandbox) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.2)
    port = server.getsockname()[1]
    got: list[object] = []

    def accept() -> None:
        end = time.monotonic() + 4
        while time.monotonic() < end:
            try:
                conn, _ = server.accept()
                got.append(conn)
                conn.close()
            except (TimeoutError, OSError):
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    code = (
        "import socket\n"
        f"s = socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
        "print('CONNECTED')\n"
    )
    ex, tok = _py(sb, code, Limits(wall_s=4))
    t.join()
    server.close()
    _expect(not got, "a sandboxed program reached a loopback server on the host", ex)
    _expect(b"CONNECTED" not in ex.stdout and ex.status is Status.RUNTIME_ERROR,
            "connect did not fail", ex)  # fmt: skip
    _no_leftovers(tok)


def write_outside(sb: Sandbox) -> None:
    marker = f"/var/tmp/pg-escape-{uuid.uuid4().hex[:8]}"
    code = (
        "import os\nok = 0\n"
        f"for p in ['/etc/pg-escape', '{marker}', '/usr/pg-escape', '/pg-escape', '/root/pg']:\n"
        "    try:\n        open(p, 'w').write('x')\n        print('WROTE', p)\n"
        "    except OSError:\n        ok += 1\n"
        "open('inside.txt', 'w').write('fine')\nprint('denied', ok)\n"
    )
    ex, tok = _py(sb, code, Limits(wall_s=5))
    _expect(b"WROTE" not in ex.stdout, "a write outside the work dir succeeded", ex)
    _expect(b"denied 5" in ex.stdout and ex.status is Status.OK, "write checks did not run", ex)
    _expect(not os.path.exists(marker) and not os.path.exists("/etc/pg-escape"),
            "a file appeared on the host")  # fmt: skip


def other_runs_invisible(sb: Sandbox) -> None:
    secret = uuid.uuid4().hex
    holder = f"import time\nopen('secret-{secret}.txt', 'w').write('{secret}')\ntime.sleep(2.5)\n"
    seeker = (
        "import os, glob, time\ntime.sleep(0.8)\nhits = []\n"
        "for root in ['/tmp', '/proc', '/var/tmp', '/dev/shm', '/run']:\n"
        "    for dirpath, dirs, files in os.walk(root):\n"
        "        if dirpath.startswith('/proc/') and dirpath.count('/') > 3: dirs[:] = []\n"
        f"        hits += [os.path.join(dirpath, f) for f in files if '{secret}' in f]\n"
        "print('HITS', hits)\n"
        f"for p in glob.glob('/proc/*/root/tmp/secret-{secret}.txt'):\n"
        "    try: print('READ', open(p).read())\n    except OSError: pass\n"
        "try:\n    open('secret-x.txt', 'w').write('mine')\nexcept OSError: pass\n"
    )
    results: dict[str, Execution] = {}

    def run(name: str, code: str) -> None:
        results[name] = _py(sb, code, Limits(wall_s=10))[0]

    threads = [threading.Thread(target=run, args=a) for a in (("h", holder), ("s", seeker))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    s = results["s"]
    _expect(s.status is Status.OK, "seeker failed", s)
    _expect(b"HITS []" in s.stdout and b"READ" not in s.stdout, "a run saw another run's files", s)
    _expect(results["h"].status is Status.OK, "holder failed", results["h"])


def output_flood(sb: Sandbox) -> None:
    code = "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n"
    ex, tok = _py(sb, code, Limits(wall_s=10, stdout_bytes=100_000))
    _expect(ex.status is Status.OUTPUT_LIMIT, "output flood not stopped", ex)
    _expect(ex.stdout_truncated and len(ex.stdout) == 100_000, "output not cut exactly at the cap")
    _no_leftovers(tok)


def fill_disk(sb: Sandbox) -> None:
    code = (
        "total = 0\n"
        "try:\n    with open('big', 'wb') as f:\n        while True:\n"
        "            f.write(b'0' * 2**20); f.flush(); total += 2**20\n"
        "except OSError as e:\n    print('STOPPED', total, e.errno)\n"
    )
    ex, tok = _py(sb, code, Limits(wall_s=10, disk_bytes=32 * 2**20, file_size_bytes=1 << 30))
    _expect(b"STOPPED" in ex.stdout, "disk fill was never stopped", ex)
    written = int(ex.stdout.split()[1])
    _expect(written <= 32 * 2**20, f"wrote {written} bytes past a 32 MiB quota", ex)
    _no_leftovers(tok)


def fd_exhaustion(sb: Sandbox) -> None:
    code = "import os\nfds = []\nwhile True:\n    fds.append(os.open('/dev/null', os.O_RDONLY))\n"
    ex, tok = _py(sb, code, Limits(wall_s=5, open_files=64))
    _expect(ex.status is Status.RUNTIME_ERROR and b"Too many open files" in ex.stderr,
            "fd exhaustion not contained as a runtime error", ex)  # fmt: skip
    _no_leftovers(tok)


def kill_parent(sb: Sandbox) -> None:
    code = (
        "import os, signal\n"
        "for pid in (os.getppid(), 1):\n"
        "    try:\n        os.kill(pid, signal.SIGKILL)\n        print('SENT', pid)\n"
        "    except OSError as e:\n        print('DENIED', pid, e.errno)\n"
        "print('still here')\n"
    )
    ex, tok = _py(sb, code, Limits(wall_s=5))
    _expect(
        ex.status is Status.OK and b"still here" in ex.stdout,
        "killing the parent broke the run",
        ex,
    )
    _expect(ex.measurement is not None, "no measurement after kill-parent")
    _no_leftovers(tok)


def no_privileges(sb: Sandbox) -> None:
    """The program holds no capability (not even in its bounding set), cannot gain one, runs as
    an unprivileged uid with no groups, and cannot raise its hard limits."""
    code = (
        "import os, resource\n"
        "st = dict(l.split(':', 1) for l in open('/proc/self/status').read().splitlines())\n"
        "caps = {k: int(st[k], 16) for k in ('CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb')}\n"
        "print('CAPS', sum(caps.values()), 'NNP', st['NoNewPrivs'].strip())\n"
        "print('IDS', min(os.getresuid() + os.getresgid()), 'GROUPS', len(os.getgroups()))\n"
        "try:\n    os.setuid(0)\n    print('SETUID ok')\nexcept OSError:\n    print('SETUID denied')\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "try:\n    resource.setrlimit(resource.RLIMIT_NOFILE, (hard + 1, hard + 1))\n"
        "    print('RAISED')\nexcept (OSError, ValueError):\n    print('HARD', hard)\n"
    )
    ex, tok = _py(sb, code, Limits(wall_s=5, open_files=64))
    out = ex.stdout_text
    _expect(ex.status is Status.OK, "privilege probe failed", ex)
    _expect("CAPS 0 NNP 1" in out, f"capabilities or no_new_privs wrong: {out!r}", ex)
    _expect("IDS 65534 GROUPS 0" in out or ("IDS 0" not in out and "GROUPS 0" in out),
            f"the program runs with a privileged id or groups: {out!r}", ex)  # fmt: skip
    _expect("SETUID denied" in out, "the program could become root", ex)
    _expect("HARD 64" in out, f"open-files hard limit not held: {out!r}", ex)
    _no_leftovers(tok)


# -- measurement ground truth -------------------------------------------------------------------
def memory_ground_truth(sb: Sandbox) -> None:
    n_mb, hold_s = 200, 1.0
    code = (
        "import time\n"
        f"x = bytearray({n_mb} * 2**20)\n"
        "for i in range(0, len(x), 4096): x[i] = 1\n"
        f"t = time.monotonic()\nwhile time.monotonic() - t < {hold_s}: time.sleep(0.01)\n"
    )
    ex, _ = _py(sb, code, Limits(wall_s=20, memory_mb=1024))
    _expect(ex.status is Status.OK, "allocation program failed", ex)
    m = ex.measurement
    assert m is not None
    _expect(
        n_mb <= m.peak_rss_mb <= n_mb * 1.15 + 15, f"peak {m.peak_rss_mb:.1f} MiB, want ~{n_mb}"
    )
    lo, hi = n_mb * hold_s * 0.95, (n_mb + 15) * (hold_s + 0.6) * 1.1
    _expect(lo <= m.memory_integral_mb_s <= hi,
            f"integral {m.memory_integral_mb_s:.1f} MiB·s, want ~{n_mb * hold_s}")  # fmt: skip


#: Opens AF_INET, AF_INET6, AF_NETLINK (NETLINK_USERSOCK) and AF_VSOCK sockets; prints what
#: each gave.
_INET = """
import socket
for family, kind, proto in ((2, 1, 0), (10, 1, 0), (16, 3, 2), (40, 1, 0)):
    try:
        socket.socket(family, kind, proto).close()
        print("opened")
    except OSError as e:
        print(e.errno)
"""
#: Parks `MB` MiB in unix stream socket buffers, 1 MiB a pair never read, and holds them.
_PARK = """
import socket, time
held = []
for _ in range({mb}):
    a, b = socket.socketpair()
    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 21)
    a.setblocking(False)
    left = 1 << 20
    while left:
        try:
            left -= a.send(b"x" * min(left, 1 << 16))
        except BlockingIOError:
            break
    held.append((a, b))
t = time.monotonic()
while time.monotonic() - t < 0.3:
    time.sleep(0.01)
print(sum(1 for _ in held))
"""


def socket_buffers_count(sb: Sandbox) -> None:
    """A run without network opens no socket but a unix one (loopback TCP buffers were RAM its
    memory cgroup missed: red team helper-87, helper-88; a netlink socket's, helper-89), and the
    buffers of the sockets it can open are its memory: in its peak, and held against
    `memory_mb`, not `memory_mb` plus the disk quota (helper-88: 250 MiB of kernel objects
    passed a 128 MiB limit)."""
    ex, tok = _py(sb, _INET, Limits(wall_s=10))
    _expect(ex.status is Status.OK and ex.stdout.split() == [b"97"] * 4,
            "a run without network opened an inet, netlink or vsock socket", ex)  # fmt: skip
    ex, tok = _py(sb, _PARK.format(mb=96), Limits(wall_s=20, memory_mb=1024, open_files=256))
    _expect(ex.status is Status.OK and ex.stdout.strip() == b"96", "parking program failed", ex)
    assert ex.measurement is not None
    _expect(ex.measurement.peak_rss_mb >= 60,
            f"96 MiB in socket buffers, peak {ex.measurement.peak_rss_mb:.1f} MiB", ex)  # fmt: skip
    _no_leftovers(tok)
    ex, tok = _py(sb, _PARK.format(mb=120), Limits(wall_s=20, memory_mb=64, open_files=256))
    _expect(ex.status is Status.MEMORY_LIMIT,
            "120 MiB in socket buffers under a 64 MiB limit not stopped", ex)  # fmt: skip
    _no_leftovers(tok)


def child_does_the_work(sb: Sandbox) -> None:
    code = (
        "import subprocess, sys\n"
        "child = 'import time\\nx = bytearray(120 * 2**20)\\nfor i in range(0, len(x), 4096): x[i] = 1\\n"
        "t = time.process_time()\\nwhile time.process_time() - t < 0.6: pass\\n'\n"
        "subprocess.run([sys.executable, '-c', child], check=True)\n"
    )
    ex, _ = _py(sb, code, Limits(wall_s=20))
    _expect(ex.status is Status.OK, "parent/child program failed", ex)
    m = ex.measurement
    assert m is not None
    _expect(m.cpu_s >= 0.55, f"child CPU not counted: {m.cpu_s:.3f} s")
    _expect(m.peak_rss_mb >= 120, f"child memory not counted: {m.peak_rss_mb:.1f} MiB")


def hidden_cpu_counted(sb: Sandbox) -> None:
    """A child the kernel reaps (its parent ignores SIGCHLD) never reaches any wait4 rusage;
    its CPU still counts (the run's cgroup, or /proc samples), and the run is flagged."""
    code = (
        "import os, signal, time\n"
        "signal.signal(signal.SIGCHLD, signal.SIG_IGN)\n"
        "r, w = os.pipe()\n"
        "if os.fork() == 0:\n"
        "    t = time.process_time()\n"
        "    while time.process_time() - t < 0.5: pass\n"
        "    os._exit(0)\n"
        "os.close(w)\nos.read(r, 1)\nprint('parent done')\n"
    )
    ex, tok = _py(sb, code, Limits(wall_s=20))
    _expect(ex.status is Status.OK and b"parent done" in ex.stdout, "hiding program failed", ex)
    m = ex.measurement
    assert m is not None
    _expect(m.cpu_s >= 0.4, f"an auto-reaped child's CPU was hidden: {m.cpu_s:.3f} s", ex)
    # Flagged, unless the child's CPU reached the rusage after all: when the parent exits
    # before the kernel has finished the child's exit, the child is reparented to the
    # sandbox's reaper, whose wait4 counts it (nothing was hidden then).
    reaped = m.cpu_user_s + m.cpu_system_s >= 0.4
    _expect("hidden_cpu" in m.flags or reaped, f"hidden CPU not flagged: {m.flags}", ex)
    _no_leftovers(tok)


def pinned_core_exclusive(sb: Sandbox) -> None:
    """A run pinned to a core (timing mode) cannot put any process on another core, however it
    asks (sched_setaffinity to every core, in a child)."""
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        return  # one core: nothing else to run on
    core = cores[-1]
    code = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    try: os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))\n"
        "    except OSError: pass\n"
        "    seen = set(); t = time.monotonic()\n"
        "    while time.monotonic() - t < 0.3:\n"
        "        seen.add(int(open('/proc/self/stat').read().rsplit(')', 1)[1].split()[36]))\n"
        "    print('AFFINITY', sorted(os.sched_getaffinity(0)), 'SEEN', sorted(seen), flush=True)\n"
        "    os._exit(0)\n"
        "os.wait()\n"
    )
    ex, tok = _py(sb, code, Limits(wall_s=20), cpu=core)
    _expect(ex.status is Status.OK and b"AFFINITY" in ex.stdout, "pinned-core probe failed", ex)
    # A remote backend (service, Ray) pins to a core of its own choosing: any one core will do.
    one = [f"AFFINITY [{c}] SEEN [{c}]" for c in range(os.cpu_count() or 1)]
    _expect(any(w in ex.stdout_text for w in one),
            f"a run pinned to one core ran on others: {ex.stdout_text!r}", ex)  # fmt: skip
    _no_leftovers(tok)


def bad_inputs(sb: Sandbox) -> None:
    ex = sb.run(["definitely-not-a-command-pg"])
    _expect(ex.status is Status.RUNTIME_ERROR and ex.exit_code == 127 and "could not start" in ex.reason,
            "missing command not reported clearly", ex)  # fmt: skip
    ex = sb.run([PY, "-c", ""])
    _expect(ex.status is Status.OK and ex.stdout == b"", "empty program failed", ex)
    ex = sb.run([PY, "-c", "import sys; sys.stdout.buffer.write(bytes(range(256)))"])
    _expect(ex.status is Status.OK and ex.stdout == bytes(range(256)), "bytes not kept exactly", ex)
    _expect("\ufffd" in ex.stdout_text, "non-UTF-8 output not decoded leniently")
    ex = sb.run([PY, "-c", "import sys; print(sys.stdin.read()[::-1])"], stdin="abc")
    _expect(ex.stdout == b"cba\n", "stdin not delivered", ex)


CHECKS: tuple[Check, ...] = tuple(
    Check(f.__name__, f)
    for f in (
        bad_inputs,
        fork_bomb,
        memory_bomb,
        slow_memory_bomb,
        ignores_sigterm,
        cpu_limit_enforced,
        process_clock_is_fine_grained,
        sleeps_past_wall,
        double_fork_escape,
        loopback_connect,
        write_outside,
        other_runs_invisible,
        output_flood,
        fill_disk,
        fd_exhaustion,
        kill_parent,
        no_privileges,
        memory_ground_truth,
        socket_buffers_count,
        child_does_the_work,
        hidden_cpu_counted,
        pinned_core_exclusive,
    )
)


def check_sandbox(backend: Sandbox, only: list[str] | None = None) -> list[str]:
    """Run every conformance check (or those named in `only`); raise on the first failure.

    Returns the names of the checks that passed.
    """
    passed = []
    for check in CHECKS:
        if only is not None and check.name not in only:
            continue
        try:
            check.fn(backend)
        except ConformanceError as exc:
            raise ConformanceError(f"{backend.name}: {check.name}: {exc}") from None
        passed.append(check.name)
    return passed
