"""Issue 13, holes 3, 5, 6 and 2 (function tasks): the warm Python worker.

A candidate cannot forge an assertion oracle's verdict (the test code runs in a process of its
own, under another uid, and alone holds the result channel); nothing a call leaves in /tmp,
however deep or locked, poisons a later call (an uncleanable call is the candidate's failure
and restarts its worker); the worker's parent imports a fixed list, never a candidate's, so no
import side effect or module state passes between candidates; CPU hidden in a child nobody
waited for is counted. Every test runs real programs in real workers (and the real judge and
reward for the "can a cheaper program score higher?" tests).
"""

from __future__ import annotations

import pytest
from attack_tasks import sum_squares_task

from perfgym.judge import Candidate, Judge, JudgeConfig
from perfgym.judge.verdict import Stage
from perfgym.rewards import get_reward
from perfgym.sandbox import Limits, Status
from perfgym.sandbox.pyworker import PythonWorker, PythonWorkerPool
from perfgym.tasks import load_suite
from perfgym.tasks.task import Task


@pytest.fixture(scope="module")
def worker():
    w = PythonWorker()
    yield w
    w.close()


@pytest.fixture(scope="module")
def judge():
    with Judge(JudgeConfig(repeats=1, measure_baseline=False, measure_reference=False)) as j:
        yield j


@pytest.fixture(scope="module")
def humaneval0():
    return load_suite("humaneval").get("HumanEval/0")


# -- hole 3: a wrong answer forges OK through the result channel ----------------------------------
# Writes an "ok" result into every descriptor it inherited and exits before check() can run.
FORGE = """
import json, os
def has_close_elements(numbers, threshold):
    return None
for fd in range(3, 1024):
    try:
        os.pwrite(fd, json.dumps({"ok": True}).encode(), 0)
    except OSError:
        try:
            os.write(fd, json.dumps({"ok": True}).encode())
        except OSError:
            pass
os._exit(0)
"""

# Returns an object equal to everything: in one process with the test code, every assert holds.
ALWAYS_EQUAL = """
class Anything:
    def __eq__(self, other):
        return True
    __hash__ = object.__hash__
def has_close_elements(numbers, threshold):
    return Anything()
"""

# Patches the module the test code uses (HumanEval's checks import math, random, copy...).
PATCH_STDLIB = """
import copy
copy.deepcopy = lambda x, memo=None: 'patched'
def has_close_elements(numbers, threshold):
    return copy.deepcopy(numbers) == 'patched'
"""


def test_assertion_candidate_cannot_forge_ok_through_inherited_fds(judge, humaneval0):
    """Hole 3: on d1bff82 this wrong program was OK (reward 1.26 instead of NR's 0.05)."""
    (v,) = judge.judge_many([Candidate(humaneval0, source=FORGE, model="m")])
    assert v.stage is Stage.NR and not v.infra_error, (v.stage, v.reason)


def test_assertion_value_with_custom_eq_cannot_pass(judge, humaneval0):
    """Further attack (trusted channel): only plain values reach the test code's asserts."""
    (v,) = judge.judge_many([Candidate(humaneval0, source=ALWAYS_EQUAL, model="m")])
    assert v.stage is Stage.NR and not v.infra_error, (v.stage, v.reason)


def test_test_code_stdlib_cannot_be_patched_by_the_candidate(worker, humaneval0):
    """Further attack: the test code imports its own modules, not the candidate's patched ones
    (HumanEval/0's check does not use copy; this checker does, as many HumanEval checks do)."""
    checker = (
        "import copy\n"
        "def check(candidate):\n"
        "    assert copy.deepcopy([1]) == [1]\n"
        "    assert candidate([1.0, 2.0], 0.5) is False\n"
    )
    r = worker.check_call(PATCH_STDLIB, checker, "has_close_elements")
    assert r.status is Status.RUNTIME_ERROR and "AssertionError" in r.error, r.error


def test_assertion_oracle_still_judges_right_and_wrong(worker, humaneval0):
    right = worker.check_call(humaneval0.baseline.source, humaneval0.oracle.checker or "",
                              humaneval0.entry_point or "")  # fmt: skip
    assert right.status is Status.OK, right.error
    wrong = humaneval0.goal + "    return False\n"
    r = worker.check_call(wrong, humaneval0.oracle.checker or "", humaneval0.entry_point or "")
    assert r.status is Status.RUNTIME_ERROR and "AssertionError" in r.error
    r = worker.check_call("def has_close_elements(n, t):\n    raise ValueError('no')\n",
                          humaneval0.oracle.checker or "", "has_close_elements")  # fmt: skip
    assert r.status is Status.RUNTIME_ERROR and "ValueError: no" in r.error
    r = worker.check_call("x = [0] * (2**40)\n", "def check(c):\n    pass\n", "f",
                          limits=Limits(memory_mb=64))  # fmt: skip
    assert r.status is Status.MEMORY_LIMIT, r.error
    r = worker.check_call("def f():\n    while True: pass\n", "def check(c):\n    c()\n", "f",
                          limits=Limits(wall_s=0.5))  # fmt: skip
    assert r.status is Status.TIMEOUT


def test_candidate_cannot_read_the_test_code(worker):
    """Further attack (hidden-file route): the test code's expected values never enter the
    candidate's process, through the request or the parent's compile cache."""
    checker = "def check(candidate):\n    assert candidate() == 'SECRET-EXPECTED-7f3a'\n"
    spy = (
        "import gc, sys\n"
        "def f():\n"
        "    mods = [m for n, m in list(sys.modules.items())\n"
        "            if n == '__main__' or n.startswith(('pyworker', 'worker_'))]\n"
        "    seen = [k for m in mods for k in getattr(m, '_codes', {}) if 'SECRET' in k]\n"
        "    for o in gc.get_objects():\n"
        "        if isinstance(o, dict) and 'SECRET' in str(o.get('checker', '')):\n"
        "            seen.append(o['checker'])\n"
        "    return 'SECRET-EXPECTED-7f3a' if seen else 'nothing'\n"
    )
    assert worker.check_call(spy, checker, "f").status is Status.RUNTIME_ERROR
    assert worker.check_call(spy, checker, "f").status is Status.RUNTIME_ERROR  # cached now


def test_compiled_sources_of_other_calls_are_unreachable(worker):
    """Further attack (hidden-file route): on d1bff82 a call found every earlier call's source
    (a reference's, say) in the worker parent's compile cache: `sys.modules['__main__']._codes`
    (looked for in every module of the worker's server, which is split across its siblings)."""
    reference = "def solve(x):\n    return 'REFERENCE-ONLY-91c2'\n"
    assert worker.call(reference, "solve", [1]).value == "REFERENCE-ONLY-91c2"
    thief = (
        "import sys\n"
        "def solve(x):\n"
        "    mods = [m for n, m in list(sys.modules.items())\n"
        "            if n == '__main__' or n.startswith(('pyworker', 'worker_'))]\n"
        "    return [k for m in mods for k in getattr(m, '_codes', {}) if 'REFERENCE-ONLY' in k]\n"
    )
    r = worker.call(thief, "solve", [1])
    assert r.status is Status.OK and r.value == [], r.value


# -- hole 5: cleanup that cannot be defeated -------------------------------------------------------
DEEP = """
import os
def f(depth):
    os.chdir('/tmp')
    for _ in range(depth):
        os.mkdir('d' * 200)
        os.chdir('d' * 200)
    open('bottom', 'w').close()
    return depth
"""


def test_deep_tmp_tree_does_not_poison_later_calls():
    """Hole 5: on d1bff82 a tree 1,500 levels deep made the cleanup raise RecursionError; the
    tree stayed and every later call (and this one) was a SANDBOX_ERROR."""
    with PythonWorkerPool(size=1) as pool:
        attacker = pool.call(DEEP, "f", [1500], limits=Limits(wall_s=30))
        assert attacker.status is Status.OK, attacker.error  # its own verdict, not infra
        later = pool.call("import os\ndef f():\n    return os.listdir('/tmp')\n", "f")
        assert later.status is Status.OK and later.value == [], (later.status, later.error)
        stats = pool.stats()
    assert stats["failed_cleanups"] == 0 and stats["restarts"] == 0, stats


LOCKED = """
import os, stat
def f():
    os.makedirs('/tmp/a/b/c')
    open('/tmp/a/b/c/file', 'w').close()
    os.mkfifo('/tmp/a/fifo')
    os.symlink('/etc/passwd', '/tmp/a/link')
    os.symlink('/tmp/a', '/tmp/loop')
    for p in ('/tmp/a/b/c/file', '/tmp/a/b/c', '/tmp/a/b', '/tmp/a'):
        os.chmod(p, 0)
    return 1
"""


def test_locked_fifo_and_link_leftovers_are_removed(worker):
    """Further attack (shared state): directories without permissions, a FIFO, links. /tmp is
    a call can write only /tmp and /dev/shm (POSIX shm), the worker's own tmpfs mounts, both
    emptied after every call."""
    r = worker.call(LOCKED, "f")
    assert r.status is Status.OK, r.error
    probe = (
        "import os\n"
        "def f():\n"
        "    return os.listdir('/tmp'), [d for d in ('/dev', '/dev/shm', '/var/tmp', '/run', '/')\n"
        "                                if os.path.isdir(d) and os.access(d, os.W_OK)]\n"
    )
    assert worker.call(probe, "f").value == ([], ["/dev/shm"])


def test_uncleanable_call_fails_and_restarts_its_worker():
    """A call whose leftovers the worker will not delete (here: more entries than it allows) is
    the candidate's failure (RUNTIME_ERROR, never SANDBOX_ERROR), the worker restarts with a
    fresh /tmp, and the counters a health check reads say so."""
    many = (
        "def f():\n    for i in range(300):\n        open(f'/tmp/{i}', 'w').close()\n    return 1\n"
    )
    with PythonWorkerPool(size=1) as pool:
        pool.workers[0].cleanup_max_entries = 100
        r = pool.call(many, "f")
        assert r.status is Status.RUNTIME_ERROR and "could not clean" in r.error, r.error
        later = pool.call("import os\ndef f():\n    return os.listdir('/tmp')\n", "f")
        assert later.status is Status.OK and later.value == []
        stats = pool.stats()
        # pipelined calls behind an uncleanable one run on the fresh worker, not as failures
        out = pool.map([(many, "f", [])] + [("def f():\n    return 2\n", "f", [])] * 3)
    assert stats["failed_cleanups"] == 1 and stats["restarts"] == 1, stats
    assert [o.status for o in out] == [Status.RUNTIME_ERROR] + [Status.OK] * 3


# -- hole 6: a pristine worker ---------------------------------------------------------------------
def test_worker_imports_do_not_reach_later_programs(worker):
    """Hole 6: on d1bff82 the parent pre-imported `this` for the first call, and every later
    call flushed the Zen of Python into its own output (correct programs became WO)."""
    worker.call("import this\ndef f():\n    return 1\n", "f")
    later = worker.call("def f():\n    return 1\n", "f")
    assert later.status is Status.OK and later.stdout == "", later.stdout[:80]
    prog = worker.run_program("print('only me')\n")
    assert prog.stdout == b"only me\n", prog.stdout[:80]


def test_preimports_are_no_channel_between_candidates(worker):
    """Hole 6: a module named by one candidate (here `wave`) was imported into the parent and
    so visible to every later candidate: one bit of state per module name."""
    worker.call("import wave\ndef f():\n    return 1\n", "f")
    probe = "import sys\ndef f():\n    return 'wave' in sys.modules, 'this' in sys.modules\n"
    assert worker.call(probe, "f").value == (False, False)


# -- hole 2 in the worker: CPU hidden in a child nobody waited for ---------------------------------
WORK = "def work(n):\n    return sum(i * i for i in range(n))\n"

HIDE_SIG_IGN = (
    WORK
    + """
import os, signal
def f(n):
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    r, w = os.pipe()
    if os.fork() == 0:
        os.write(w, str(work(n)).encode())
        os._exit(0)
    os.close(w)
    return int(os.read(r, 100))
"""
)

# No SIGCHLD trick: the child exits unwaited, so only the worker (its new parent) reaps it.
HIDE_UNWAITED = (
    WORK
    + """
import os
def f(n):
    r, w = os.pipe()
    if os.fork() == 0:
        os.write(w, str(work(n)).encode())
        os._exit(0)
    os.close(w)
    return int(os.read(r, 100))
"""
)


@pytest.mark.parametrize("hider", [HIDE_SIG_IGN, HIDE_UNWAITED], ids=["sig_ign", "unwaited"])
def test_cpu_of_a_hidden_child_is_counted(worker, hider):
    """Hole 2 (function tasks): on d1bff82 a call's CPU was its child's wait4 rusage only, so
    work done in an auto-reaped (or unwaited) grandchild cost nothing."""
    n = 2_000_000
    honest = worker.call(WORK + "def f(n):\n    return work(n)\n", "f", [n])
    hidden = worker.call(hider, "f", [n])
    assert honest.status is Status.OK and hidden.status is Status.OK
    assert hidden.value == honest.value
    assert hidden.cpu_s > 0.3 * honest.cpu_s, (hidden.cpu_s, honest.cpu_s)
    if hider is HIDE_SIG_IGN:
        # Either the kernel reaped the worker child (its CPU is only in the cgroup: hidden_cpu),
        # or it was still exiting when the call returned and the cleanup killed and reaped it
        # (its rusage counted: outlived_main). Both degrade the call's timing.
        assert {"hidden_cpu", "outlived_main"} & set(hidden.flags), hidden.flags
        if "hidden_cpu" in hidden.flags:
            assert hidden.cpu_hidden_s > 0.1 * honest.cpu_s, (hidden.cpu_hidden_s, honest.cpu_s)
    assert "hidden_cpu" not in honest.flags and honest.cpu_mechanism.startswith("cgroup")


def _sum_task() -> Task:
    baseline = "def f(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n"
    return sum_squares_task("py-fn-sum-squares", baseline, [400_000, 600_000])


def _hide(src: str) -> str:
    """`src` with its entry point's work moved into an auto-reaped child."""
    return (
        src.replace("def f(n):", "def _real(n):") + "import os as _os, signal as _signal\n"
        "def f(n):\n"
        "    _signal.signal(_signal.SIGCHLD, _signal.SIG_IGN)\n"
        "    r, w = _os.pipe()\n"
        "    if _os.fork() == 0:\n"
        "        _os.write(w, str(_real(n)).encode())\n"
        "        _os._exit(0)\n"
        "    _os.close(w)\n"
        "    data = b''\n"
        "    while chunk := _os.read(r, 4096):\n"
        "        data += chunk\n"
        "    return int(data)\n"
    )


def test_hiding_function_candidate_scores_no_higher_than_baseline():
    """Must show (Python function task): a baseline-speed candidate that hides its work in an
    auto-reaped child scores at most the plain baseline's RLPF reward."""
    task = _sum_task()
    assert task.baseline.source is not None
    with Judge(JudgeConfig(repeats=3, max_repeats=None, drift=None)) as judge:
        honest, hidden = judge.judge_many(
            [
                Candidate(task, source=task.baseline.source, sample=0),
                Candidate(task, source=_hide(task.baseline.source), sample=1),
            ]
        )
    assert honest.stage is Stage.OK and hidden.stage is Stage.OK, (honest.reason, hidden.reason)
    r_honest, r_hidden = get_reward("rlpf")([honest, hidden])
    f_honest, f_hidden = get_reward("rlpf", on_missing_timing="floor")([honest, hidden])
    print(f"rlpf honest {r_honest} hidden {r_hidden}; floor-policy {f_honest} {f_hidden}")
    # A hider gets a number (the correctness floor, every correct program's minimum), never None.
    assert r_hidden is not None, "a hider must be scored, not dropped as None"
    assert r_honest is None or r_hidden <= r_honest, (r_hidden, r_honest)
    assert f_hidden is not None and f_honest is not None and f_hidden <= f_honest
    # hidden_cpu, or outlived_main when the hidden child was still exiting as main ended.
    assert {"hidden_cpu", "outlived_main"} & set(hidden.flags), hidden.flags


def test_the_cleanup_limit_counts_tmp_and_dev_shm_together():
    """Entries left in /tmp and /dev/shm count against one limit (a red team left twice the
    limit, one limit's worth in each, and the cleanup went on unbilled)."""
    split = (
        "def f():\n    for i in range(60):\n"
        "        open(f'/tmp/{i}', 'w').close()\n        open(f'/dev/shm/{i}', 'w').close()\n"
        "    return 1\n"
    )
    with PythonWorkerPool(size=1) as pool:
        pool.workers[0].cleanup_max_entries = 100
        r = pool.call(split, "f")
        later = pool.call(
            "import os\ndef f():\n    return os.listdir('/tmp'), os.listdir('/dev/shm')\n", "f"
        )
    assert r.status is Status.RUNTIME_ERROR and "could not clean" in r.error, (r.status, r.error)
    assert later.status is Status.OK and later.value == ([], []), (later.status, later.value)
