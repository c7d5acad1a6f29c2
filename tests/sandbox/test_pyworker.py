"""Warm Python workers: isolation between calls, limits, statuses and external timing; program
mode against the sandbox itself."""

import pytest

from perfgym.sandbox import Limits, Status
from perfgym.sandbox.base import SandboxConfig
from perfgym.sandbox.pyworker import PythonWorker, PythonWorkerPool

STATEFUL = """
import os
calls = []
def f(x):
    calls.append(x)
    with open('left-behind.txt', 'a') as fh:
        fh.write('x')
    return len(calls), sorted(os.listdir('.')), os.getuid()
"""


@pytest.fixture(scope="module")
def worker():
    w = PythonWorker()
    yield w
    w.close()


def test_module_state_and_files_do_not_leak(worker):
    first = worker.call(STATEFUL, "f", [1])
    second = worker.call(STATEFUL, "f", [2])
    assert first.status is Status.OK, first.error
    assert first.value[:2] == (1, ["left-behind.txt"])
    assert second.value[:2] == (1, ["left-behind.txt"])  # fresh module, fresh work dir
    assert first.value[2] != 0  # unprivileged


def test_processes_do_not_outlive_the_call(worker):
    spawn = (
        "import os, time\n"
        "def f():\n"
        "    if os.fork() == 0:\n"
        "        os.setsid()\n"
        "        time.sleep(60)\n"
        "    return 0\n"
    )
    assert worker.call(spawn, "f").status is Status.OK
    probe = "import os\ndef f():\n    return sorted(int(p) for p in os.listdir('/proc') if p.isdigit())\n"
    pids = worker.call(probe, "f").value
    assert len(pids) == 1  # this call's process: nothing of the earlier one (the worker's own are hidden)


def test_statuses(worker):
    assert worker.call("def f(:\n", "f").phase == "compile"
    r = worker.call("def f():\n    raise KeyError('k')\n", "f")
    assert r.status is Status.RUNTIME_ERROR and "KeyError" in r.error
    r = worker.call("def f():\n    while True: pass\n", "f", limits=Limits(wall_s=0.5))
    assert r.status is Status.TIMEOUT
    r = worker.call("def f():\n    return bytearray(2**31)\n", "f", limits=Limits(memory_mb=64))
    assert r.status is Status.MEMORY_LIMIT
    r = worker.call("def f():\n    return object()\n", "f")
    assert r.status is Status.RUNTIME_ERROR and "cannot pass" in r.error
    r = worker.call("x = 1\n", "f")
    assert r.status is Status.RUNTIME_ERROR and "entry point" in r.error


def test_values_cross_exactly(worker):
    r = worker.call("def f(a, b):\n    return a, b, {1: {2.5}}, None\n", "f", [(1, "x"), b"\xff"])
    assert r.value == ((1, "x"), b"\xff", {1: {2.5}}, None)


def test_custom_eq_cannot_fool_the_host(worker):
    src = "class Liar(int):\n    def __eq__(self, o): return True\ndef f():\n    return Liar(3)\n"
    r = worker.call(src, "f")
    assert r.status is Status.RUNTIME_ERROR  # only exact builtin types cross


def test_external_time_covers_the_call(worker):
    r = worker.call("import time\ndef f():\n    time.sleep(0.2)\n", "f")
    assert r.wall_s >= 0.2 and r.reported_call_s is not None and r.reported_call_s >= 0.19


def test_pool_map_in_order():
    with PythonWorkerPool(size=2) as pool:
        out = pool.map([("def f(x):\n    return x * 2\n", "f", [i]) for i in range(20)])
    assert [r.value for r in out] == [i * 2 for i in range(20)]


# -- program mode: a stdio program as `python3 prog.py`, against the sandbox itself ------------
SCRIPT = "/tmp/build/main.py"
STDIN = "3\n1 2 3\nlast line \xe9\n".encode() + b"\xff\xfe raw\n"
TRICKY = {
    "input-then-read": "import sys\nn = int(input())\nrest = sys.stdin.read().split()\n"
    "print(n, rest[:3], len(rest))\n",
    "for-line": "import sys\nfor i, line in enumerate(sys.stdin):\n    print(i, repr(line))\n",
    "readline-and-buffer": "import sys\nprint(sys.stdin.readline().strip())\n"
    "sys.stdout.flush()\nsys.stdout.buffer.write(sys.stdin.buffer.read()[::-1])\n",
    "open-0-and-os-read": "import os\nhead = os.read(0, 4)\nprint(head, open(0, 'rb').read())\n",
    "exit-code": "import sys\nprint('partial')\nsys.exit(3)\n",
    "exit-message": "raise SystemExit('bye now')\n",
    "exit-none": "print('x', end='')\nexit()\n",
    "exit-big": "import sys\nsys.exit(300)\n",
    "os-exit-loses-buffer": "import os\nprint('never flushed')\nos._exit(5)\n",
    "uncaught": "def f(d):\n    return d['k']\nprint('before')\nf({})\n",
    "chained": "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    raise ValueError('bad') from e\n",
    "stderr-ok": "import sys\nprint('to err', file=sys.stderr)\nprint('out')\n",
    "main-guard": "import os, sys\nif __name__ == '__main__':\n"
    "    print(sys.argv, __file__, os.getcwd(), os.environ['HOME'], sorted(os.listdir('.')))\n",
    "threads-and-atexit": "import atexit, threading, time\natexit.register(print, 'at exit')\n"
    "def late():\n    time.sleep(0.05)\n    print('thread done')\n"
    "threading.Thread(target=late).start()\nprint('main done')\n",
    "surrogates-roundtrip": "import sys\nprint(sys.stdin.read())\n",
    "own-source": "print(len(open(__file__).read().splitlines()))\n",
    "recursion-depth": "import sys\ndef d(n):\n    try:\n        return d(n + 1)\n    except RecursionError:\n"
    "        return n\nprint(d(0))\n",
    "sys-path": "import sys\nprint(sys.path)\n",  # the host's .pth entries in neither
    "big-output-cut": "import sys\nw = sys.stdout.write\nfor i in range(10**6):\n    w('y' * 100)\n",
}


@pytest.mark.parametrize("name", list(TRICKY))
def test_program_mode_matches_the_sandbox(worker, warm, name):
    src = TRICKY[name]
    limits = Limits(wall_s=10, stdout_bytes=1 << 20)
    ex = warm.run(["python3", SCRIPT], stdin=STDIN, files={"build/main.py": src}, limits=limits)
    pr = worker.run_program(src, stdin=STDIN, argv=[SCRIPT], limits=limits)
    assert (pr.status, pr.exit_code, pr.signal) == (ex.status, ex.exit_code, ex.signal), pr.reason
    assert pr.stdout == ex.stdout
    assert pr.stderr == ex.stderr
    assert pr.stdout_truncated == ex.stdout_truncated
    if ex.status is not Status.OK:
        assert pr.reason == ex.reason


def test_program_mode_limits(worker):
    r = worker.run_program("while True:\n    pass\n", limits=Limits(wall_s=0.5))
    assert r.status is Status.TIMEOUT  # an endless loop that returned was cut: no wall asserted
    r = worker.run_program("import time\ntime.sleep(30)\n", limits=Limits(wall_s=0.5))
    assert r.status is Status.TIMEOUT
    hog = "x = bytearray(512 * 2**20)\nfor i in range(0, len(x), 4096):\n    x[i] = 1\n"
    r = worker.run_program(hog, limits=Limits(memory_mb=64))
    assert r.status is Status.MEMORY_LIMIT and b"MemoryError" in r.stderr
    bomb = "import os\nwhile True:\n    os.fork()\n"
    r = worker.run_program(bomb, limits=Limits(wall_s=2, max_processes=32))
    assert r.status is not Status.OK and r.status is not Status.SANDBOX_ERROR
    r = worker.run_program("print(1)\n", limits=Limits(wall_s=2))  # the worker survived
    assert (r.status, r.stdout) == (Status.OK, b"1\n")


def test_program_mode_leaves_nothing_behind(worker):
    litter = (
        "import os, subprocess, sys, time\n"
        "open('/tmp/left.txt', 'w').write('x')\n"
        "os.makedirs('/tmp/d/e', exist_ok=True)\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    time.sleep(60)\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print('spawned')\n"
    )
    assert worker.run_program(litter, argv=[SCRIPT]).stdout == b"spawned\n"
    probe = (
        "import os\n"
        "print((sorted(os.listdir('/tmp')), os.listdir('/tmp/build'),\n"
        "       sorted(int(p) for p in os.listdir('/proc') if p.isdigit())))\n"
    )
    out = worker.run_program(probe, argv=[SCRIPT]).stdout.decode()
    files, build, pids = eval(out)  # noqa: S307 - our own probe's output
    assert files == ["build"] and build == ["main.py"]
    assert len(pids) == 1  # this run only (the worker's own processes are hidden: hidepid)


def test_program_mode_cannot_forge_the_reply(worker):
    """The host connection is closed in the child: writing a fake reply to every descriptor
    it might be reaches nothing."""
    forge = (
        "import json, os, struct\n"
        "fake = json.dumps({'exit_status': 0, 'killed': '', 'stdout': 'ZmFrZQ=='}).encode()\n"
        "for fd in range(3, 64):\n"
        "    try:\n"
        "        os.write(fd, struct.pack('>I', len(fake)) + fake)\n"
        "    except OSError:\n"
        "        pass\n"
        "raise SystemExit(2)\n"
    )
    r = worker.run_program(forge)
    assert r.status is Status.RUNTIME_ERROR and r.exit_code == 2
    assert worker.run_program("print('next')\n").stdout == b"next\n"


def test_program_mode_on_the_pool():
    with PythonWorkerPool(size=2) as pool:
        outs = [pool.run_program("print(int(input()) * 2)\n", stdin=f"{i}\n") for i in range(6)]
    assert [o.stdout for o in outs] == [f"{i * 2}\n".encode() for i in range(6)]


def test_paths_hidden_after_start_are_hidden(outside_tmp):
    """A judge hides each suite's directory as it reaches it: a running worker restarts."""
    secret = outside_tmp / "suite"
    secret.mkdir(mode=0o755)
    (secret / "reference.py").write_text("print('the answer')\n")
    config = SandboxConfig()
    w = PythonWorker(config)
    try:
        look = f"import os\nprint(os.listdir({str(secret)!r}))\n"
        assert w.run_program(look).stdout == b"['reference.py']\n"
        config.hide_paths.append(str(secret))
        assert w.run_program(look).stdout == b"[]\n"
    finally:
        w.close()


def test_workers_of_different_processes_have_different_uids():
    """RLIMIT_NPROC is per uid: workers must not share one across processes."""
    import subprocess
    import sys

    probe = "from perfgym.sandbox.pyworker import PythonWorker as W; print(W().uid, W().uid)"
    uids = [subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                           check=True).stdout.split() for _ in range(2)]  # fmt: skip
    flat = [int(u) for pair in uids for u in pair]
    assert len(set(flat)) == 4 and all(u < 2**31 for u in flat)


def test_a_compile_bomb_is_the_programs_error_and_the_worker_carries_on(worker):
    """compile() of a deeply nested source can take hundreds of MiB in the worker's parent: it
    runs there under the call's memory allowance, and its failure is the program's."""
    limits = Limits(wall_s=10, memory_mb=64)
    for bomb in ("x = " + "-" * 1_000_000 + "1\n", "x = a" + ".b" * 300_000 + "\n"):
        r = worker.call(bomb, "f", [], limits)
        assert (r.status, r.phase) == (Status.RUNTIME_ERROR, "compile"), r
        assert "MemoryError" in r.error or "RecursionError" in r.error
        p = worker.run_program(bomb, limits=limits)
        assert (p.status, p.exit_code) == (Status.RUNTIME_ERROR, 1), p
    assert worker.call("def f():\n    return 7\n", "f").value == 7
