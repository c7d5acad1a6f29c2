"""A warm worker's call that asks to forget leaves nothing a later call can time (helper-95).

Red team helper-95 carried an answer from one ENAMEL call to the next through the host's
directory cache: looking up a name that does not exist is ~2x slower the first time than once
the kernel cached it as missing, and that cache is the whole host's. A call with
`Limits.forget_page_cache` now runs in the calls' own memory cgroup, reclaimed once its
processes are gone (`_inside/worker_forget.py`), so what it looked up is cold again.
"""

from __future__ import annotations

import os
import statistics
import time
import uuid

import pytest

from perfgym.sandbox import Status
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.pyworker import PythonWorker, PythonWorkerPool

N = 4000
#: Looks up N names under /usr/bin that do not exist (the view binds the host's /usr).
LOOK = "import os\ndef f(prefix, n):\n" \
       "    for i in range(n):\n" \
       "        try:\n            os.stat(prefix + str(i))\n" \
       "        except OSError:\n            pass\n    return n\n"  # fmt: skip


def _median_lookup_ns(prefix: str) -> float:
    times = []
    for i in range(N):
        t0 = time.perf_counter_ns()
        try:
            os.stat(prefix + str(i))
        except OSError:
            pass
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times)


def _warm_over_cold(worker: PythonWorker, forget: bool) -> float:
    """The host's median lookup of names the call looked up, over names nobody did."""
    tag = uuid.uuid4().hex[:10]
    looked, fresh = f"/usr/bin/.pg-{tag}-a-", f"/usr/bin/.pg-{tag}-b-"
    r = worker.call(LOOK, "f", [looked, N], Limits(wall_s=60, forget_page_cache=forget))
    assert r.status is Status.OK and r.value == N, r.error
    cold = _median_lookup_ns(fresh)
    return _median_lookup_ns(looked) / cold


@pytest.fixture(scope="module")
def worker():
    w = PythonWorker()
    yield w
    w.close()


def _calls_cgroup(worker: PythonWorker) -> bool:
    cg = worker._cgroup
    return cg is not None and cg.calls is not None


def test_a_call_that_forgets_leaves_its_lookups_cold(worker):
    worker.call("def f():\n    return 1\n", "f", [], Limits(wall_s=60))  # started
    if not _calls_cgroup(worker):
        pytest.skip("no calls' memory cgroup here (cgroup v2 or none writable)")
    kept = min(_warm_over_cold(worker, forget=False) for _ in range(2))
    forgot = max(_warm_over_cold(worker, forget=True) for _ in range(2))
    # The control shows the channel (cached misses ~0.5x the cold time here); forgotten,
    # the names are as cold as names nobody looked up.
    assert kept < 0.8, kept
    assert forgot > 0.85, (forgot, kept)


def test_only_the_calls_processes_are_in_the_calls_cgroup(worker):
    """The worker's own processes stay out (reclaiming them would drop the interpreter's pages
    every call); the call's child and what it forks are in."""
    src = ("import os, subprocess\ndef f():\n"
           "    mine = open('/proc/self/cgroup').read()\n"
           "    kid = subprocess.run(['cat', '/proc/self/cgroup'], capture_output=True, text=True)\n"
           "    return [mine, kid.stdout]\n")  # fmt: skip
    r = worker.call(src, "f", [], Limits(wall_s=60))
    assert r.status is Status.OK, r.error
    if not _calls_cgroup(worker):
        pytest.skip("no calls' memory cgroup here (cgroup v2 or none writable)")
    for text in r.value:
        memory = [ln for ln in text.splitlines() if ":memory:" in ln]
        assert memory and memory[0].endswith("/calls"), text
    with open(os.path.join(worker._cgroup.calls, "cgroup.procs")) as f:
        assert f.read().strip() == ""  # the call gone, nothing of the worker's left in it


def test_an_enamel_sample_call_forgets():
    """ENAMEL's sample calls ask to forget; the reference's are the task's own and need not."""
    from perfgym.enamel import sample as sample_module
    from perfgym.enamel.reference import measure_reference
    from perfgym.tasks import load_suite

    task = load_suite("enamel").get("HumanEval/1")
    seen: list[bool] = []
    real = sample_module.call

    def spy(workers, task, program, case, limits):  # noqa: ANN001, ANN202
        seen.append(limits.forget_page_cache)
        return real(workers, task, program, case, limits)

    with PythonWorkerPool() as pool:
        ref = measure_reference(task, pool, repeats=1)
        sample_module.call = spy
        try:
            run = sample_module.evaluate_sample(task, ref, task.reference.source, pool, 1)
        finally:
            sample_module.call = real
    assert run.sample.correct and seen and all(seen), (run.stopped, seen)


def test_a_closed_or_dead_workers_cgroups_go_with_their_calls_cgroup():
    from perfgym.sandbox import worker_cgroup

    w = PythonWorker()
    w.call("def f():\n    return 1\n", "f", [], Limits(wall_s=60))
    if not _calls_cgroup(w):
        w.close()
        pytest.skip("no calls' memory cgroup here (cgroup v2 or none writable)")
    calls, memory = w._cgroup.calls, w._cgroup.memory
    w.close()
    assert not os.path.exists(calls) and not os.path.exists(memory)
    # A dead perfgym's worker (a PID that is not running) left both: the next worker removes them.
    base = os.path.dirname(memory)
    stale = os.path.join(base, "worker-4194303-1-0")
    os.makedirs(os.path.join(stale, worker_cgroup.CALLS), exist_ok=True)
    fresh, why = worker_cgroup.WorkerCgroup.create()
    assert fresh is not None, why
    try:
        assert not os.path.exists(stale)
    finally:
        fresh.destroy()


#: Says what it sees first (its own PID and the inode number of a new file in /tmp and
#: /dev/shm), then forks k processes and makes k files in each (each removed again): what the
#: next call sees first would move by k if the worker's counters carried it.
COUNTERS = """import os
def f(k):
    out = [os.getpid()]
    for d in ('/tmp', '/dev/shm'):
        p = d + '/probe'
        with open(p, 'w'):
            out.append(os.stat(p).st_ino)
        os.unlink(p)
    for _ in range(k):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    for d in ('/tmp', '/dev/shm'):
        for i in range(k):
            p = d + '/f' + str(i)
            open(p, 'w').close()
            os.unlink(p)
    return out
"""


def test_no_counter_of_the_worker_carries_a_number_to_the_next_call(worker):
    """Red team helper-97: a call that forked k processes moved the next call's PID by exactly
    k, and one that made k files moved the next new file's inode number by k. Now the zygote
    draws each fork's PID at random and a forgetting call gets a fresh /tmp and /dev/shm."""
    lim = Limits(wall_s=60, forget_page_cache=True)
    seen = []
    for k in (0, 0, 37, 0, 100, 0):
        r = worker.call(COUNTERS, "f", [k], lim)
        assert r.status is Status.OK, r.error
        seen.append(r.value)
    pids = [v[0] for v in seen]
    steps = [b - a for a, b in zip(pids, pids[1:], strict=False)]
    # Before: steps 1, 1, 38, 1, 101 (the call before's forks, plus one). Random now.
    assert steps.count(1) <= 1 and 38 not in steps and 101 not in steps, pids
    assert {tuple(v[1:]) for v in seen} == {tuple(seen[0][1:])}, seen  # every call's first file
