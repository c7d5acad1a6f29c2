"""Red team of the multi-core runs: a candidate cannot get more cores than its task gives (not by
its source, not by widening its affinity), and threads in a one-core task buy no speed."""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

import pytest

from perfgym.judge import Candidate, Judge, JudgeConfig, Stage
from perfgym.judge.stages import MORE_THREADS, RUNTIME_THREAD_SLACK, more_threads
from perfgym.judge.variant import prepare
from perfgym.judge.verdict import Timing
from perfgym.sandbox.execution import Status
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.pool import usable_cores
from perfgym.tasks import load_suite
from perfgym.tasks.perfcodebench import load_task
from perfgym.tasks.task import Solution
from perfgym.timing.decision import speed_call

ROOT = Path(__file__).parents[1] / "fixtures"
THREADS = ROOT / "threads" / "executable_tasks"

#: The fixture's division-per-term sum on one thread: what the two-thread candidate splits.
SERIAL = """#include "interface.h"

uint64_t modular_sum(uint64_t n, uint64_t k, uint64_t p) {
    uint64_t sum = 0;
    for (uint64_t i = 0; i < n; ++i) sum += (i * k) % p;
    return sum;
}
"""

#: Asks for every core of the machine, then aborts a measured (pinned) run if it got more
#: than the run was given: a run that stays OK never held more.
WIDENS = """#include <sched.h>
#include <unistd.h>
#include <cstdlib>
static const bool widened = [] {
    const char* omp = std::getenv("OMP_NUM_THREADS");
    if (omp == nullptr) return true;  // a correctness run: not pinned
    cpu_set_t all;
    CPU_ZERO(&all);
    for (long c = 0; c < sysconf(_SC_NPROCESSORS_CONF); ++c) CPU_SET(c, &all);
    (void)sched_setaffinity(0, sizeof all, &all);
    cpu_set_t now;
    CPU_ZERO(&now);
    if (sched_getaffinity(0, sizeof now, &now) != 0) std::abort();
    if (CPU_COUNT(&now) > std::atoi(omp)) std::abort();
    return true;
}();
"""


@pytest.fixture(scope="module")
def one_core_task():
    """The two-thread fixture as a one-core task whose baseline is the serial sum."""
    task = load_suite(str(THREADS)).get("cpp_two_threads")
    return task.model_copy(update={"cores": 1,
                                   "baseline": Solution(label="baseline", source=SERIAL)})  # fmt: skip


# `alone`: three paired rounds of 17 ms runs on a machine where the other worker's tests come
# and go once called two threads 0.83x the serial baseline, significant (CI at 2618a20); the
# property under test is the reserved core's, not the test's luck with the other worker.
@pytest.mark.alone
@pytest.mark.parametrize(
    "config",
    [
        pytest.param({}, id="harness-clock"),
        pytest.param({"use_harness_time": False, "clock": "cpu"}, id="cpu-clock"),
    ],
)
def test_threads_in_a_one_core_task_do_not_beat_the_serial_baseline(one_core_task, config):
    two_threads = load_suite(str(THREADS)).get("cpp_two_threads").baseline.source
    with Judge(JudgeConfig(repeats=3, measure_reference=False, **config)) as judge:
        (v,) = judge.judge_many([Candidate(one_core_task, source=two_threads, model="threads")])
    assert v.stage is Stage.OK, v.reason
    assert v.candidate.cores == 1 and v.baseline.cores == 1
    call = speed_call(v.candidate, v.baseline)
    # On its one reserved core the second thread only takes turns with the first. No call at
    # all (under load the harness's and the external clock's savings can disagree, and then
    # the judge credits no speed) is no credit either.
    assert call is None or call.outcome != "faster", call
    seen = v.candidate.threads_seen
    if seen is not None and v.baseline.threads_seen is not None:
        assert seen >= 2 and (MORE_THREADS in v.flags) == (seen > v.baseline.threads_seen)


@pytest.mark.skipif(len(usable_cores()) < 2, reason="needs a second core to try to reach")
def test_a_candidate_cannot_widen_its_affinity_beyond_its_tasks_cores(one_core_task):
    source = WIDENS + SERIAL
    with Judge(JudgeConfig(repeats=1, measure_baseline=False, measure_reference=False)) as j:
        (v,) = j.judge_many([Candidate(one_core_task, source=source, model="widens")])
        built = prepare(one_core_task, "widens", source=source, sandbox=j.sandbox, cache=j.cache)
        # The probe can tell: told one core but left floating, it widens and aborts.
        ex = j.sandbox.run(built.argv, binds=built.binds, env={"OMP_NUM_THREADS": "1"},
                           limits=Limits(wall_s=20))  # fmt: skip
    assert v.stage is Stage.OK, v.reason
    # Had it held a second core in any measured run, that run would have aborted.
    assert v.candidate.ok and v.candidate.cores == 1, v.candidate.status_reason
    assert ex.status is Status.RUNTIME_ERROR and ex.signal == signal.SIGABRT, ex.reason


def test_candidate_sources_never_raise_a_tasks_cores(tmp_path):
    """Only the task's own files (baseline, reference, harness) are read for threads; a
    published candidate that spawns them leaves the task at one core."""
    src = ROOT / "perfcodebench" / "executable_tasks" / "cpp_topk_sum"
    task_dir = tmp_path / "executable_tasks" / "cpp_topk_sum"
    shutil.copytree(src, task_dir)
    threaded = (
        "#include <thread>\n"
        + (task_dir / "candidate" / "fast-model" / "solution.cpp").read_text()
        + "\nstatic void spin() { std::thread t([] {}); t.join(); }\n"
    )
    (task_dir / "candidate" / "fast-model" / "solution.cpp").write_text(threaded)
    assert load_task(task_dir).cores == 1


def test_a_runtimes_own_threads_are_not_more_threads_than_the_task():
    # Go's runtime read 3 or 4 threads for the same program (a copy of the reference said to
    # run more threads than its task in 1 of 30 verdicts); a candidate that starts threads of
    # its own goes past that.
    def seen(n: int) -> Timing:
        return Timing(estimate_s=0.01, threads_seen=n)

    slack = RUNTIME_THREAD_SLACK["go"]
    assert not more_threads(seen(4), seen(3), seen(3), slack=slack)
    assert more_threads(seen(4 + slack + 1), seen(3), seen(4), slack=slack)
    assert not more_threads(seen(4 + slack), seen(3), seen(4), slack=slack)
    assert more_threads(seen(4), seen(3), seen(3))  # C, C++, Python: every thread is the program's
    assert not more_threads(seen(9), None, Timing(estimate_s=0.01))  # nothing to compare with
