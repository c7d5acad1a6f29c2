"""Multi-core tasks: their measured runs hold N reserved cores (seen from inside the run), the
timing records how many, a machine with fewer caps and says so, and the parallel work really
runs in parallel (CPU above wall) only where the cores are there."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from perfgym.judge import Candidate, Judge, JudgeConfig, Stage
from perfgym.judge.measure import reserve
from perfgym.judge.plan import own_clock
from perfgym.judge.variant import prepare
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.pool import usable_cores
from perfgym.tasks import load_suite

# Compares wall-clock times or loads cores on purpose: no other test runs beside it.
pytestmark = pytest.mark.alone

FIXTURES = Path(__file__).parents[1] / "fixtures" / "threads" / "executable_tasks"
TWO_CORES = pytest.mark.skipif(
    len(usable_cores()) < 2, reason="needs two usable cores to reserve two"
)

#: The baseline (two threads), plus a check that aborts a measured run (the only runs with
#: OMP_NUM_THREADS set: pinned ones) unless the run holds exactly two cores and was told so.
WANTS_TWO = (
    "#include <sched.h>\n#include <cstdlib>\n#include <cstring>\n"
    "static const bool checked = [] {\n"
    '    const char* omp = std::getenv("OMP_NUM_THREADS");\n'
    "    if (omp == nullptr) return true;  // a correctness run: not pinned\n"
    "    cpu_set_t set;\n"
    "    CPU_ZERO(&set);\n"
    "    if (sched_getaffinity(0, sizeof set, &set) != 0) std::abort();\n"
    '    const char* go = std::getenv("GOMAXPROCS");\n'
    '    if (CPU_COUNT(&set) != 2 || std::strcmp(omp, "2") != 0 || go == nullptr ||\n'
    '        std::strcmp(go, "2") != 0) std::abort();\n'
    "    return true;\n"
    "}();\n"
)


@pytest.fixture(scope="module")
def suite():
    return load_suite(str(FIXTURES))


@pytest.fixture(scope="module")
def judge():
    with Judge(JudgeConfig(repeats=3)) as j:
        yield j


def _wants_two(task):
    return WANTS_TWO + task.baseline.source


@TWO_CORES
def test_measured_runs_hold_the_tasks_two_cores(suite, judge):
    task = suite.get("cpp_two_threads")
    assert task.cores == 2
    (v,) = judge.judge_many([Candidate(task, source=_wants_two(task), model="m")])
    assert v.stage is Stage.OK, v.reason
    for role in ("candidate", "baseline", "reference"):
        t = getattr(v, role)
        assert t is not None and t.cores == 2 and t.cores_wanted == 2, (role, t)
        assert "cores_capped" not in t.flags
    # the check inside the candidate passed in every measured run: two cores, told so
    assert v.candidate.ok, v.candidate.status_reason
    assert v.baseline.estimate_s > v.reference.estimate_s  # the fixture's reference is faster


@TWO_CORES
def test_the_same_program_in_a_one_core_task_holds_one(suite, judge):
    task = suite.get("cpp_two_threads").model_copy(update={"cores": 1})
    (v,) = judge.judge_many([Candidate(task, source=_wants_two(task), model="m")])
    assert v.stage is Stage.OK  # correctness runs float: the check does not apply
    assert v.candidate.cores == 1 and v.baseline.cores == 1
    assert not v.candidate.ok and "measured run failed" in v.candidate.status_reason


def test_fewer_measuring_cores_than_asked_is_capped_and_recorded(suite):
    task = suite.get("cpp_two_threads")
    one = usable_cores()[:1]
    config = JudgeConfig(repeats=1, cores=one, use_harness_time=False, measure_reference=False)
    with Judge(config) as j:
        (v,) = j.judge_many([Candidate(task, source=task.reference.source, model="m")])
    assert v.stage is Stage.OK
    for t in (v.candidate, v.baseline):
        assert t.cores == 1 and t.cores_wanted == 2 and "cores_capped" in t.flags
        assert t.clock == "wall"  # a multi-core task is timed on the wall clock, not CPU
    assert "cores_capped" in v.flags


def test_a_detected_task_asks_for_the_default_and_is_capped_here(suite):
    task = suite.get("cpp_detected_threads")
    assert task.cores == 4 and "std::thread in baseline/solution.cpp" in task.metadata["cores_from"]
    lanes, each = reserve(JudgeConfig(), task.cores)
    have = len(usable_cores())
    assert each == min(4, have)
    assert len(lanes) == (have // 4 if have >= 4 else 1)


def test_reserve_splits_measuring_cores_into_disjoint_sets():
    cores = usable_cores()
    lanes, each = reserve(JudgeConfig(cores=cores), 1)
    assert lanes == cores and each == 1
    lanes, each = reserve(JudgeConfig(cores=cores), 2)
    if len(cores) >= 2:
        assert each == 2 and len(lanes) == len(cores) // 2
        flat = [c for group in lanes for c in group]
        assert len(flat) == len(set(flat))  # no core in two sets
    lanes, each = reserve(JudgeConfig(timing_mode=False, concurrency=4), 2)
    assert lanes == [None, None] and each is None


def test_cpu_time_stays_cpu_for_one_core_and_becomes_wall_for_many():
    assert own_clock("cpu", 1) == "cpu" and own_clock("cpu", 2) == "wall"
    assert own_clock("wall", 2) == "wall" and own_clock("instructions", 4) == "instructions"


@TWO_CORES
def test_two_threads_on_two_reserved_cores_use_more_cpu_than_wall(suite, judge):
    """The order-of-magnitude check: on two reserved cores the two threads overlap (CPU/wall
    well above 1); pinned to one core they cannot (CPU <= wall, whatever the load)."""
    task = suite.get("cpp_two_threads")
    v = prepare(task, "baseline", source=task.baseline.source, sandbox=judge.sandbox,
                cache=judge.cache)  # fmt: skip
    assert v.ready, v.reason
    pair, one = usable_cores()[:2], usable_cores()[:1]

    def ratio(cpu):
        ex = judge.sandbox.run(v.argv, binds=v.binds, limits=Limits(wall_s=20), cpu=cpu)
        assert ex.status.value == "OK" and ex.measurement is not None, ex.reason
        assert ex.measurement.cores == list(cpu)
        return ex.measurement.cpu_s / ex.measurement.wall_s

    single = [ratio(one) for _ in range(2)]
    assert max(single) <= 1.05
    parallel = max(ratio(pair) for _ in range(3))
    if parallel <= 1.3:
        load = os.getloadavg()[0]
        if load > 1.0:
            pytest.skip(f"best CPU/wall {parallel:.2f} on two cores at load {load:.1f}: the "
                        "other core was busy with other work")  # fmt: skip
    assert parallel > 1.3


PROBE = (
    "import os\n"
    "try:\n    os.sched_setaffinity(0, set(range(os.cpu_count())))\nexcept OSError:\n    pass\n"
    "print(sorted(os.sched_getaffinity(0)), os.environ.get('OMP_NUM_THREADS'),"
    " os.environ.get('GOMAXPROCS'))\n"
)


@TWO_CORES
@pytest.mark.parametrize("backend", ["warm", "warm-fork", "bwrap"])
def test_every_backend_pins_a_run_to_its_core_set(backend):
    """Seen from inside: the set's cores and no other (widening is cut down), the thread
    variables set to its size unless the caller sets them, the set recorded."""
    from perfgym.sandbox.base import SandboxConfig
    from perfgym.sandbox.factory import make_sandbox

    config = SandboxConfig(exec_stub=backend != "warm-fork")
    pair = usable_cores()[:2]
    with make_sandbox("bwrap" if backend == "bwrap" else "warm", config) as sb:
        ex = sb.run(["python3", "-c", PROBE], cpu=pair, env={"GOMAXPROCS": "7"},
                    limits=Limits(wall_s=20))  # fmt: skip
    # both cores and no other; OMP_NUM_THREADS the set's size, the caller's GOMAXPROCS kept
    assert ex.stdout_text.split() == [f"[{pair[0]},", f"{pair[1]}]", "2", "7"], ex
    assert ex.measurement.cores == pair
    assert f"cores {pair[0]},{pair[1]}" in ex.measurement.mechanisms["core"]


@pytest.mark.parametrize("cpu", [[], [0, 0], [-1], [True], "0", 1.0])
def test_a_malformed_core_set_is_refused(cpu):
    from perfgym.errors import ConfigError
    from perfgym.sandbox.run_request import check_pin

    with pytest.raises(ConfigError):
        check_pin(cpu)
