"""A candidate's measured run leaves nothing in the host's page cache (red team helper-93,
/work/wt/rt93).

Big read-only files in every run's view have cold pages. A run that reads one caches it, and a
later run can tell a cached page from a cold one by timing a read (0.1-4 us against 55-400
us). Copies of one program handed each workload's answer from the first measured run of it
to the later ones that way, one after another, so no lane rule applied: mean RLPF 0.56-0.61
against the honest copies' 0.15, 9 of 12 above them, unflagged. `Limits.forget_page_cache`
(set by the judge on candidates' measured runs) drops every page the run's memory cgroup was
charged when it ends, so the next run finds the cache as it was.
"""

from __future__ import annotations

import ctypes
import os

import pytest

from perfgym.sandbox import BwrapSandbox, WarmSandbox
from perfgym.sandbox.base import Bind
from perfgym.sandbox.cgroups import detect
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.pyworker import PythonWorkerPool

pytestmark = pytest.mark.skipif(detect() != "v1", reason="needs a cgroup v1 memory controller")

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                       ctypes.c_long]  # fmt: skip
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]

PAGES = 1024
#: Caches every 16th page of the bound file, as helper-93's writer did (no read-ahead).
TOUCH = (
    "import mmap, os\n"
    "fd = os.open('/data/cold', os.O_RDONLY)\n"
    "m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)\n"
    "m.madvise(mmap.MADV_RANDOM)\n"
    f"print(sum(m[i * 4096] for i in range(0, {PAGES}, 16)))\n"
)


def cached_pages(path: str) -> int:
    """Pages of `path` in the page cache (mincore, as the file's writer: the true answer)."""
    fd = os.open(path, os.O_RDWR)
    try:
        size = os.fstat(fd).st_size
        addr = _libc.mmap(None, size, 1, 1, fd, 0)  # PROT_READ, MAP_SHARED
        vec = (ctypes.c_ubyte * (size // 4096))()
        assert _libc.mincore(addr, size, vec) == 0
        _libc.munmap(addr, size)
        return sum(v & 1 for v in vec)
    finally:
        os.close(fd)


@pytest.fixture
def cold(tmp_path):
    path = tmp_path / "data" / "cold"
    path.parent.mkdir()
    path.write_bytes(os.urandom(PAGES * 4096))
    os.sync()
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
    assert cached_pages(str(path)) == 0
    return path


@pytest.mark.parametrize("backend", [WarmSandbox, BwrapSandbox])
def test_a_forgetting_run_leaves_no_page_it_read_cached(cold, backend) -> None:
    bind = Bind(host_path=str(cold.parent), sandbox_path="/data")
    with backend() as sb:
        ex = sb.run(["python3", "-c", TOUCH], binds=[bind],
                    limits=Limits(forget_page_cache=True))  # fmt: skip
        assert ex.status.value == "OK", ex.stderr_text
        assert cached_pages(str(cold)) == 0
        ex = sb.run(["python3", "-c", TOUCH], binds=[bind], limits=Limits())
        assert ex.status.value == "OK", ex.stderr_text
        assert cached_pages(str(cold)) >= PAGES // 16  # without it, they stay: the channel


def test_the_judge_forgets_for_every_run_of_a_candidate_only() -> None:
    """A candidate's workload runs and its test runs forget; the task's own runs do not
    (red team helper-96: HumanEval times its tests, and a correctness run that kept what it
    cached handed the answer to the timed runs of the same input)."""
    from perfgym.judge import JudgeConfig
    from perfgym.judge.plan import plan_task
    from perfgym.judge.variant import Variant
    from perfgym.sandbox.pyworker import PythonWorkerPool
    from perfgym.tasks import load_suite

    seen: list[tuple[str, bool]] = []

    class Recording(BwrapSandbox):
        def _run(self, request):  # noqa: ANN001, ANN202
            seen.append((request.command[-1], request.limits.forget_page_cache))
            return super()._run(request)

    task = load_suite("perfgym-core").get("py-lis-dp")
    with Recording() as sb, PythonWorkerPool(size=1) as workers:
        plan = plan_task(task, JudgeConfig(), sb, workers)
        run, case = plan.runner(), plan.workloads[0]
        test = plan.tests[0]
        for label, on in (("candidate-0", case), ("baseline", case), ("candidate-1", test),
                          ("reference", test)):  # fmt: skip
            v = Variant(label, task.baseline.source, argv=["python3", "-c", "print(1)"])
            run(v, on, None)
    assert [f for _, f in seen] == [True, False, True, False]


class _RecordingPool(PythonWorkerPool):
    """A real pool that notes each request's limits."""

    def __init__(self, *a, **k) -> None:  # noqa: ANN002, ANN003
        super().__init__(*a, **k)
        self.forgot: list[tuple[str, bool]] = []  # (source, forgets)

    def call(self, source, entry, args=(), limits=None, **k):  # noqa: ANN001, ANN003, ANN201
        self.forgot.append((source, bool(limits and limits.forget_page_cache)))
        return super().call(source, entry, args, limits, **k)

    def check_call(self, source, checker, entry, limits=None, **k):  # noqa: ANN001, ANN003, ANN201
        self.forgot.append((source, bool(limits and limits.forget_page_cache)))
        return super().check_call(source, checker, entry, limits, **k)

    def batch(self, source, entry, tests, limits, **k):  # noqa: ANN001, ANN003, ANN201
        self.forgot.append((source, limits.forget_page_cache))
        return super().batch(source, entry, tests, limits, **k)


@pytest.mark.parametrize("suite", ["humaneval", "humanevalplus"])
def test_a_suite_without_workloads_forgets_in_its_candidates_calls(suite: str) -> None:
    """HumanEval (an assertion oracle: one call per test) and HumanEval+ (batched tests): no
    workloads, so their tests are timed; a candidate's every call forgets, the reference's
    none."""
    from perfgym.judge import Candidate, Judge, JudgeConfig
    from perfgym.tasks import load_suite

    task = load_suite(suite).get("HumanEval/59")
    pool = _RecordingPool(size=1)
    try:
        with Judge(JudgeConfig(repeats=1, measure_baseline=False)) as judge:
            judge._workers = pool
            (v,) = judge.judge_many([Candidate(task, source=task.reference.source, sample=0)])
    finally:
        pool.close()
    assert v.stage.value == "OK", v
    forgot = [f for _, f in pool.forgot]
    # The candidate's correctness run(s) and its timed runs forget (before: none did, the task
    # having no workloads); the reference's own runs, measured first, keep what they cache.
    assert forgot.count(True) >= 2 and False in forgot, forgot
