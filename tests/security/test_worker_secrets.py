"""Nothing secret where candidates run: attacks on what a warm worker's call process holds.

Every process that runs a candidate (a function call's child, an assertion call's candidate,
a batch's child, a program run, a generator) must never have held another program's source,
a reference's output, test code or the host's environment: not as a Python object, and not as
freed memory that ctypes reads back. Each test is a thief run in a real worker after (or
during) the call whose secret it wants; the secret is built at run time from pieces, so the
thief's own source never holds it.
"""

from __future__ import annotations

import os

import pytest

from perfgym.errors import TaskFormatError
from perfgym.sandbox import Limits, Status
from perfgym.sandbox.pyworker import PythonWorker
from perfgym.tasks import materialize_all
from perfgym.tasks.task import Language, Solution, Task, TaskKind, TestCase

#: Reads every private writable mapping of the calling process (heap, stack, anonymous) and
#: returns the `width` bytes after each occurrence of `needle`.
HEAP_SCAN = """
import ctypes

def _scan(needle, width):
    hits = []
    with open("/proc/self/maps") as fh:
        rows = [line.split() for line in fh.read().splitlines()]
    for row in rows:
        name = row[5] if len(row) > 5 else ""
        if not row[1].startswith("rw"):
            continue
        if name.startswith("[") and name not in ("[heap]", "[stack]"):
            continue
        lo, hi = (int(x, 16) for x in row[0].split("-"))
        try:
            data = ctypes.string_at(lo, hi - lo)
        except Exception:
            continue
        i = data.find(needle)
        while i >= 0:
            hits.append(data[i + len(needle) : i + len(needle) + width])
            i = data.find(needle, i + 1)
    return hits

def _found(first, second, width=6):
    # the needle is put together here, so this source never holds it whole
    return sorted({h.decode("latin-1") for h in _scan((first + second).encode(), width)
                   if len(h) == width and h.isalnum()})
"""


@pytest.fixture
def worker():
    w = PythonWorker()
    yield w
    w.close()


def test_an_earlier_calls_result_is_not_in_a_later_calls_memory(worker):
    # The reference's answer on a workload passes through the worker on its way to the host: a
    # candidate called on the same workload later must not find it (its output check would
    # then compare the reference's answer with itself).
    reference = "def solve(n):\n    return ['REFANSWER-' + 'q7x9z2'] * 200\n"
    assert worker.call(reference, "solve", [5]).status is Status.OK
    for _ in range(2):
        assert worker.call("def g():\n    return 1\n", "g").value == 1
    thief = HEAP_SCAN + "def solve(n):\n    return _found('REFANS', 'WER-')\n"
    r = worker.call(thief, "solve", [5])
    assert r.status is Status.OK, r.error
    assert r.value == [], r.value


def test_the_test_code_of_this_very_call_is_not_in_the_candidates_memory(worker):
    # A fresh worker whose first request is the thief's own assertion call: the test code
    # arrives with the request, so the candidate's process must be forked before it is read.
    # Of a realistic size (HumanEval's run to kilobytes): over obmalloc's 512 bytes.
    checker = "def check(candidate):\n    assert candidate() == 'EXPECTED-k3m8p1'\n" + (
        "    assert candidate() != 'x'\n" * 60
    )
    thief = HEAP_SCAN + (
        "def f():\n"
        "    hits = _found('EXPEC', 'TED-')\n"
        "    return 'EXPECTED-' + hits[0] if hits else 'nothing'\n"
    )
    r = worker.check_call(thief, checker, "f")
    assert r.status is Status.RUNTIME_ERROR, "a candidate that knows nothing passed the check"
    # and the honest candidate still passes in the same worker
    honest = "def f():\n    return 'EXPECTED-k3m8p1'\n"
    assert worker.check_call(honest, checker, "f").status is Status.OK


def test_a_reference_programs_output_is_not_in_a_later_runs_memory(worker):
    # Program mode: the worker captures a run's stdout (a reference's expected output).
    reference = "print('\\n'.join(['EXPOUT-' + 'r4t6y8'] * 3000))\n"
    out = worker.run_program(reference, argv=["/tmp/build/main.py"])
    assert out.status is Status.OK and b"EXPOUT-r4t6y8" in out.stdout
    thief = HEAP_SCAN + "print(_found('EXPO', 'UT-'))\n"
    r = worker.run_program(thief, argv=["/tmp/build/main.py"])
    assert r.status is Status.OK, r.stderr_text
    assert r.stdout_text.strip() == "[]", r.stdout_text


def test_an_earlier_batchs_answers_are_not_in_a_later_batchs_memory(worker):
    # HumanEval+ batches: the reference's answers to every test go through the worker.
    limits = Limits(wall_s=10)
    reference = "def f(x):\n    return ('BATCHANS-' + 'u1i3o5') * 40\n"
    ref = worker.batch(reference, "f", [([i], limits) for i in range(5)], limits)
    assert all(t.status is Status.OK for t in ref.cases), ref
    thief = HEAP_SCAN + "def f(x):\n    return _found('BATCH', 'ANS-')\n"
    r = worker.batch(thief, "f", [([0], limits)], limits)
    assert r.cases[0].status is Status.OK, r.cases[0]
    assert r.cases[0].value == [], r.cases[0].value


def test_no_python_object_holds_another_calls_source(worker):
    # gc.get_objects() and the server's own modules (__main__ and its siblings): no cached code object, no source string,
    # no request of an earlier call is reachable as a Python object.
    reference = "def solve(x):\n    return 'OBJSECRET-' + 'a2s4d6'\n# OBJSECRET-a2s4d6\n"
    assert worker.call(reference, "solve", [1]).status is Status.OK
    thief = (
        "import gc, sys, types\n"
        "def solve(x):\n"
        "    needle = 'OBJSECRET-' + 'a2s4d6'\n"
        "    found = []\n"
        "    for o in gc.get_objects():\n"
        "        if isinstance(o, types.CodeType) and needle in repr(o.co_consts):\n"
        "            found.append('code')\n"
        "        elif isinstance(o, dict):\n"
        "            for v in list(o.values()):\n"
        "                if isinstance(v, str) and needle in v:\n"
        "                    found.append('dict')\n"
        "    for mod in [m for n, m in list(sys.modules.items())\n"
        "                if n == '__main__' or n.startswith(('pyworker', 'worker_'))]:\n"
        "        for name, v in list(vars(mod).items()):\n"
        "            if needle in repr(v)[:100000]:\n"
        "                found.append(name)\n"
        "    return found\n"
    )
    r = worker.call(thief, "solve", [1])
    assert r.status is Status.OK and r.value == [], (r.status, r.value, r.error)


def test_the_hosts_environment_is_not_the_workers():
    # A credential in the judge's environment (an API key for `perfgym optimize`) must not
    # reach a candidate: not in os.environ, not in the stack's initial environment area.
    os.environ["PERFGYM_TEST_HOST_TOKEN"] = "HOSTTOKEN-" + "z9x8c7"
    worker = PythonWorker()
    try:
        assert worker.call("def g():\n    return 1\n", "g").value == 1  # started now
    finally:
        del os.environ["PERFGYM_TEST_HOST_TOKEN"]
    try:
        thief = HEAP_SCAN + (
            "import os\n"
            "def f():\n"
            "    return [k for k in os.environ if 'TEST_HOST' in k] + _found('HOSTTO', 'KEN-')\n"
        )
        r = worker.call(thief, "f")
        assert r.status is Status.OK and r.value == [], (r.status, r.value, r.error)
        prog = worker.run_program(thief + "print(f())\n", argv=["/tmp/build/main.py"])
        assert prog.stdout_text.strip() == "[]", (prog.stdout_text, prog.stderr_text)
    finally:
        worker.close()


def test_the_parents_memory_cannot_be_read(worker):
    # The process that holds the request (and forks the candidate) is root in the sandbox,
    # the candidate is not: its memory cannot be opened, nor the zygote's.
    thief = (
        "import os\n"
        "def f():\n"
        "    out = []\n"
        "    for pid in {os.getppid(), 1}:\n"
        "        for what in ('mem', 'environ', 'cmdline'):\n"
        "            try:\n"
        "                with open(f'/proc/{pid}/{what}', 'rb') as fh:\n"
        "                    out.append((pid, what, len(fh.read(4096))))\n"
        "            except OSError:\n"
        "                pass\n"
        "    return [o for o in out if o[1] != 'cmdline']\n"
    )
    r = worker.call(thief, "f")
    assert r.status is Status.OK and r.value == [], (r.status, r.value, r.error)


def test_the_caller_of_the_candidate_holds_no_test_code(worker):
    # The assertion oracle: at call time the candidate's function can inspect its caller's
    # frames. Its caller is the candidate process's answering loop, never `check`: the test
    # code runs in another process, so the frames hold the arguments and nothing else.
    checker = "def check(candidate):\n    assert candidate(2) == 'FRAMESECRET-' + str(2)\n"
    thief = (
        "import sys\n"
        "def f(x):\n"
        "    seen = []\n"
        "    frame = sys._getframe(1)\n"
        "    while frame is not None:\n"
        "        seen.append(repr(frame.f_locals)[:100000] + repr(frame.f_code.co_consts))\n"
        "        frame = frame.f_back\n"
        "    needle = 'FRAMES' + 'ECRET-'\n"  # its own request holds its source: not the needle
        "    if any(needle in s for s in seen):\n"
        "        return needle + str(x)\n"
        "    return 'nothing'\n"
    )
    r = worker.check_call(thief, checker, "f")
    assert r.status is Status.RUNTIME_ERROR, "the candidate read the expected value in a frame"


def test_an_assertion_call_that_does_not_compile_leaves_the_worker_in_step(worker):
    # The test code is a frame of its own after the request: a request that fails before
    # reading it must not leave it to be taken for the next request.
    checker = "def check(candidate):\n    assert candidate() == 1\n"
    bad = worker.check_call("def f(:\n", checker, "f")
    assert bad.phase == "compile"
    assert worker.call("def g():\n    return 7\n", "g").value == 7
    assert worker.check_call("def f():\n    return 1\n", checker, "f").status is Status.OK
    assert worker.restarts == 0


def test_an_assertion_calls_processes_share_one_core(worker):
    # The candidate's process of an assertion call runs on one core, as a function call does.
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two cores")
    checker = "def check(candidate):\n    assert candidate() == 1\n"
    probe = "import os\ndef f():\n    return len(os.sched_getaffinity(0))\n"
    r = worker.check_call(probe, checker, "f")
    assert r.status is Status.OK, r.error


def _generated_task(task_id: str, generator: str) -> Task:
    return Task(
        id=task_id, family="gen", language=Language.PYTHON, kind=TaskKind.FUNCTION,
        entry_point="f", baseline=Solution(label="baseline", source="def f(xs):\n    return 1\n"),
        tests=[TestCase(id="lit", args=[[1]], expected=1)],
        workloads=[TestCase(id="w1", size=4, seed=1)], generator=generator,
    )  # fmt: skip


def test_a_generator_cannot_read_another_generators_inputs_from_freed_memory():
    # Generators of every task (every client's inline tasks) share the generation workers: a
    # generator must not find another task's hidden inputs in its process's memory.
    victim = _generated_task(
        "client-b-heap", "def generate(size, seed):\n    return [['GENPRIV-' + 'h5j7k9'] * 50]\n"
    )
    attacker = _generated_task(
        "client-a-heap",
        HEAP_SCAN
        + "def generate(size, seed):\n    raise RuntimeError(repr(_found('GENP', 'RIV-')))\n",
    )
    seen = []
    for _ in range(3):  # the generation pool has up to two workers: one of them served B
        materialize_all(victim, victim.workloads)
        with pytest.raises(TaskFormatError) as err:
            materialize_all(attacker, attacker.workloads)
        seen.append(str(err.value))
    assert not any("h5j7k9" in s for s in seen), seen


def test_a_call_runs_on_the_core_its_measurement_owns(worker):
    # Timing mode hands each measured call its lane's core: the call's process is on that one.
    cores = sorted(os.sched_getaffinity(0))
    probe = "import os\ndef f():\n    return sorted(os.sched_getaffinity(0))\n"
    for core in (cores[-1], cores[0]):
        r = worker.call(probe, "f", core=core)
        assert r.status is Status.OK and r.value == [core], (r.value, r.error)
    checker = f"def check(candidate):\n    assert candidate() == [{cores[-1]}]\n"
    assert worker.check_call(probe, checker, "f", core=cores[-1]).status is Status.OK
