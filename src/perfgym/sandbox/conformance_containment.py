"""The conformance checks that attack a sandbox: what a run must not escape, exhaust or reach
(processes, memory, CPU, time, files, the network, other runs, privileges)."""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid

from perfgym.sandbox.base import Sandbox
from perfgym.sandbox.conformance_kit import expect, no_leftovers, run_py
from perfgym.sandbox.execution import Execution, Status
from perfgym.sandbox.limits import Limits


def fork_bomb(sb: Sandbox) -> None:
    code = (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    )
    ex, tok = run_py(sb, code, Limits(wall_s=3, max_processes=32))
    expect(ex.status in (Status.RUNTIME_ERROR, Status.TIMEOUT), "fork bomb not stopped", ex)
    expect(ex.measurement is not None and ex.measurement.max_processes_seen <= 64,
            "fork bomb exceeded the process limit", ex)  # fmt: skip
    no_leftovers(tok)


def memory_bomb(sb: Sandbox) -> None:
    code = "x = []\nwhile True:\n    x.append(bytearray(50 * 2**20))\n"
    ex, tok = run_py(sb, code, Limits(wall_s=10, memory_mb=200))
    expect(ex.status is Status.MEMORY_LIMIT, "memory bomb not reported as MEMORY_LIMIT", ex)
    no_leftovers(tok)


def slow_memory_bomb(sb: Sandbox) -> None:
    code = "import time\nx = []\nwhile True:\n    x.append(bytearray(8 * 2**20))\n    time.sleep(0.02)\n"
    ex, tok = run_py(sb, code, Limits(wall_s=15, memory_mb=160))
    expect(ex.status is Status.MEMORY_LIMIT, "slowly growing memory not stopped", ex)
    no_leftovers(tok)


def ignores_sigterm(sb: Sandbox) -> None:
    code = "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    pass\n"
    t0 = time.monotonic()
    ex, tok = run_py(sb, code, Limits(wall_s=1.5))
    expect(ex.status is Status.TIMEOUT, "busy loop ignoring SIGTERM not timed out", ex)
    expect(time.monotonic() - t0 < 8, "timeout took far longer than the wall limit")
    no_leftovers(tok)


def cpu_limit_enforced(sb: Sandbox) -> None:
    """A busy loop is stopped at its CPU limit, well before a long wall limit."""
    t0 = time.monotonic()
    ex, tok = run_py(sb, "while True:\n    pass\n", Limits(wall_s=30, cpu_s=1))
    expect(ex.status is Status.TIMEOUT, "busy loop not stopped at its CPU limit", ex)
    expect("CPU time over" in ex.reason, f"stopped for another reason: {ex.reason!r}", ex)
    expect(time.monotonic() - t0 < 20, "CPU limit took far longer than the CPU limit")
    no_leftovers(tok)


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
    ex, _ = run_py(sb, code, Limits(wall_s=20))
    expect(ex.status is Status.OK, "clock probe failed", ex)
    median_ns, unlimited = ex.stdout.decode().split()
    expect(unlimited == "True", "the run has an RLIMIT_CPU armed", ex)
    expect(0 < int(median_ns) < 1_000_000, f"process clock moved {median_ns} ns for ~50 us", ex)


def sleeps_past_wall(sb: Sandbox) -> None:
    ex, tok = run_py(sb, "import time\ntime.sleep(30)\n", Limits(wall_s=1.0))
    expect(ex.status is Status.TIMEOUT, "idle sleeper not timed out", ex)
    m = ex.measurement
    expect(m is not None and m.wall_s >= 1.0 and m.cpu_s < 0.5, "sleeper timing wrong", ex)
    no_leftovers(tok)


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
    ex, tok = run_py(sb, code, Limits(wall_s=5))
    expect(ex.status is Status.OK and b"parent done" in ex.stdout, "double-fork run failed", ex)
    no_leftovers(tok)


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
    ex, tok = run_py(sb, code, Limits(wall_s=4))
    t.join()
    server.close()
    expect(not got, "a sandboxed program reached a loopback server on the host", ex)
    expect(b"CONNECTED" not in ex.stdout and ex.status is Status.RUNTIME_ERROR,
            "connect did not fail", ex)  # fmt: skip
    no_leftovers(tok)


def write_outside(sb: Sandbox) -> None:
    marker = f"/var/tmp/pg-escape-{uuid.uuid4().hex[:8]}"
    code = (
        "import os\nok = 0\n"
        f"for p in ['/etc/pg-escape', '{marker}', '/usr/pg-escape', '/pg-escape', '/root/pg']:\n"
        "    try:\n        open(p, 'w').write('x')\n        print('WROTE', p)\n"
        "    except OSError:\n        ok += 1\n"
        "open('inside.txt', 'w').write('fine')\nprint('denied', ok)\n"
    )
    ex, tok = run_py(sb, code, Limits(wall_s=5))
    expect(b"WROTE" not in ex.stdout, "a write outside the work dir succeeded", ex)
    expect(b"denied 5" in ex.stdout and ex.status is Status.OK, "write checks did not run", ex)
    expect(not os.path.exists(marker) and not os.path.exists("/etc/pg-escape"),
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
        results[name] = run_py(sb, code, Limits(wall_s=10))[0]

    threads = [threading.Thread(target=run, args=a) for a in (("h", holder), ("s", seeker))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    s = results["s"]
    expect(s.status is Status.OK, "seeker failed", s)
    expect(b"HITS []" in s.stdout and b"READ" not in s.stdout, "a run saw another run's files", s)
    expect(results["h"].status is Status.OK, "holder failed", results["h"])


def output_flood(sb: Sandbox) -> None:
    code = "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n"
    ex, tok = run_py(sb, code, Limits(wall_s=10, stdout_bytes=100_000))
    expect(ex.status is Status.OUTPUT_LIMIT, "output flood not stopped", ex)
    expect(ex.stdout_truncated and len(ex.stdout) == 100_000, "output not cut exactly at the cap")
    no_leftovers(tok)


def fill_disk(sb: Sandbox) -> None:
    code = (
        "total = 0\n"
        "try:\n    with open('big', 'wb') as f:\n        while True:\n"
        "            f.write(b'0' * 2**20); f.flush(); total += 2**20\n"
        "except OSError as e:\n    print('STOPPED', total, e.errno)\n"
    )
    ex, tok = run_py(sb, code, Limits(wall_s=10, disk_bytes=32 * 2**20, file_size_bytes=1 << 30))
    expect(b"STOPPED" in ex.stdout, "disk fill was never stopped", ex)
    written = int(ex.stdout.split()[1])
    expect(written <= 32 * 2**20, f"wrote {written} bytes past a 32 MiB quota", ex)
    no_leftovers(tok)


def fd_exhaustion(sb: Sandbox) -> None:
    code = "import os\nfds = []\nwhile True:\n    fds.append(os.open('/dev/null', os.O_RDONLY))\n"
    ex, tok = run_py(sb, code, Limits(wall_s=5, open_files=64))
    expect(ex.status is Status.RUNTIME_ERROR and b"Too many open files" in ex.stderr,
            "fd exhaustion not contained as a runtime error", ex)  # fmt: skip
    no_leftovers(tok)


def kill_parent(sb: Sandbox) -> None:
    code = (
        "import os, signal\n"
        "for pid in (os.getppid(), 1):\n"
        "    try:\n        os.kill(pid, signal.SIGKILL)\n        print('SENT', pid)\n"
        "    except OSError as e:\n        print('DENIED', pid, e.errno)\n"
        "print('still here')\n"
    )
    ex, tok = run_py(sb, code, Limits(wall_s=5))
    expect(
        ex.status is Status.OK and b"still here" in ex.stdout,
        "killing the parent broke the run",
        ex,
    )
    expect(ex.measurement is not None, "no measurement after kill-parent")
    no_leftovers(tok)


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
    ex, tok = run_py(sb, code, Limits(wall_s=5, open_files=64))
    out = ex.stdout_text
    expect(ex.status is Status.OK, "privilege probe failed", ex)
    expect("CAPS 0 NNP 1" in out, f"capabilities or no_new_privs wrong: {out!r}", ex)
    expect("IDS 65534 GROUPS 0" in out or ("IDS 0" not in out and "GROUPS 0" in out),
            f"the program runs with a privileged id or groups: {out!r}", ex)  # fmt: skip
    expect("SETUID denied" in out, "the program could become root", ex)
    expect("HARD 64" in out, f"open-files hard limit not held: {out!r}", ex)
    no_leftovers(tok)
