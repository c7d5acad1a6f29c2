"""Time limits that do not depend on the machine's load: CPU time of every process a run had,
the wall limit a backstop that still stops a program that waits instead of computing."""

import os
import subprocess
import sys

import pytest
from sum_programs import PROGRAMS, sum_task

from perfgym.judge import Candidate, Judge, JudgeConfig, Stage
from perfgym.judge.plan import task_limits
from perfgym.sandbox import Status
from perfgym.sandbox.limits import WALL_BACKSTOP, on_cpu
from perfgym.sandbox.pyworker import PythonWorker
from perfgym.tasks.task import Language

SUM = PROGRAMS[Language.PYTHON][0]


def spinning(seconds: float) -> str:
    """The correct sum program after `seconds` of its own CPU."""
    return (f"import time\nt0 = time.process_time()\n"
            f"while time.process_time() - t0 < {seconds}:\n    pass\n{SUM}")  # fmt: skip


#: Ways to spend wall time without CPU before answering correctly: every one must be stopped.
WAITERS = {
    "sleep": "import time\ntime.sleep(30)\n",
    "blocked read": "import os\nr, w = os.pipe()\nos.read(r, 1)\n",
    "waits on a child": "import os, time\npid = os.fork()\nif pid == 0:\n    time.sleep(30)\n"
    "    os._exit(0)\nos.waitpid(pid, 0)\n",
}
#: CPU spent in forked workers while the main process waits: the run's cgroup counts it.
FORKERS = {
    "waited children": "import os, time\nkids = []\nfor _ in range(2):\n    pid = os.fork()\n"
    "    if pid == 0:\n        t = time.process_time()\n        while time.process_time() - t < 3:"
    " pass\n        os._exit(0)\n    kids.append(pid)\nfor pid in kids:\n    os.waitpid(pid, 0)\n",
    "orphaned grandchild": "import os, time\nif os.fork() == 0:\n    if os.fork() == 0:\n"
    "        t = time.process_time()\n        while time.process_time() - t < 3: pass\n"
    "    os._exit(0)\ntime.sleep(30)\n",
}


def task_with(limit_s: float, tag: str):
    task = sum_task(Language.PYTHON)
    return task.model_copy(update={"id": f"load-limits-{tag}", "time_limit_s": limit_s})


def judge_with(backstop: float):
    config = JudgeConfig(repeats=1, measure_baseline=False, measure_reference=False,
                         test_time_factor=None, wall_backstop=backstop)  # fmt: skip
    return Judge(config)


@pytest.fixture(scope="module")
def judge():
    """A wide backstop (50x): whatever the machine's load, a CPU limit is reached first."""
    with judge_with(50.0) as j:
        yield j


@pytest.fixture(scope="module")
def tight():
    """A 3x backstop: a program that waits is stopped soon."""
    with judge_with(3.0) as j:
        yield j


def test_the_task_limit_is_on_cpu_with_a_wall_backstop():
    config = JudgeConfig()
    lim = task_limits(task_with(7.0, "plan"), config)
    assert (lim.cpu_s, lim.wall_s) == (7.0, 7.0 * WALL_BACKSTOP)
    multi = task_with(7.0, "plan-4").model_copy(update={"cores": 4})
    assert task_limits(multi, config).cpu_s == 28.0  # CPU sums over the task's threads
    assert task_limits(multi, config).wall_s == 7.0 * WALL_BACKSTOP


def test_a_correct_program_is_not_cut_on_a_loaded_machine(judge):
    """0.2 s of CPU against a 0.4 s limit, while spinners hold every core three times over (the
    run gets about a quarter of a core: some 0.8 s of wall, past the old wall limit of 0.4 s)."""
    task = task_with(0.4, "loaded")
    judge.judge_many([Candidate(task, source=SUM, model="warm")])  # workers up, outputs made
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(3 * len(os.sched_getaffinity(0)))]  # fmt: skip
    try:
        (v,) = judge.judge_many([Candidate(task, source=spinning(0.2), model="slow")])
    finally:
        for p in spinners:
            p.kill()
        for p in spinners:
            p.wait()
    assert v.stage is Stage.OK, v.reason


@pytest.mark.parametrize("how", sorted(WAITERS))
def test_a_program_that_waits_is_stopped_by_the_wall_backstop(tight, how):
    """No CPU spent, so no CPU limit is reached: the backstop (3 x 0.3 s here) stops it, says
    which clock, and the candidate does not pass."""
    (v,) = tight.judge_many([Candidate(task_with(0.3, "wait"), source=WAITERS[how] + SUM,
                                       model=how)])  # fmt: skip
    assert (v.stage, v.detail) == (Stage.NR, "TIMEOUT"), v.reason
    assert "wall time over 0.9" in v.reason, v.reason


@pytest.mark.parametrize("how", sorted(FORKERS))
def test_cpu_spent_in_forked_workers_counts_against_the_limit(judge, how):
    """The main process spends nothing and waits; its workers spin (3 s each, each one's own
    RLIMIT_CPU never reached at 0.5 s): the run's CPU, every process's, stops it at 0.5 s."""
    (v,) = judge.judge_many([Candidate(task_with(0.5, "fork"), source=FORKERS[how] + SUM,
                                       model=how)])  # fmt: skip
    assert (v.stage, v.detail) == (Stage.NR, "TIMEOUT"), v.reason
    assert "CPU time over 0.5" in v.reason, v.reason


def test_a_function_calls_helpers_are_counted_by_the_warm_worker():
    """A function-task call (warm worker) that forks spinners and waits: the worker reads its
    cgroup's CPU while it waits (RLIMIT_CPU is per process and in whole seconds)."""
    program = "import os, time\ndef f():\n" + "".join(
        "    " + line + "\n" for line in FORKERS["waited children"].splitlines()[1:]
    ) + "    return 1\n"  # fmt: skip
    w = PythonWorker()
    try:
        r = w.call(program, "f", [], on_cpu(0.5, backstop=50.0))
        if r.cpu_mechanism and "cgroup" not in r.cpu_mechanism:
            pytest.skip(f"no CPU cgroup for the worker here ({r.cpu_mechanism})")
    finally:
        w.close()
    assert r.status is Status.TIMEOUT, (r.status, r.error)
    assert r.error.startswith("CPU time over 0.5"), r.error


@pytest.mark.parametrize("bad", [0.5, 0, -1, 1000, "long"])
def test_a_malformed_backstop_is_refused(bad):
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="wall_backstop"):
        JudgeConfig(wall_backstop=bad)
