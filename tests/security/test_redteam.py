"""Red team after issue 13: attacks on the fixes themselves.

Each test is an attack on the real worker, judge or reward. The four that still got through
until issue 26 (freed-heap reads of an earlier call's test code and a reference, a HumanEval
lookup table built that way, unpinned measured calls) were expected failures; they are plain
tests now that each call runs in a process that never held another's secrets. Attacks that
were contained make cheap guards.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from attack_tasks import function_task, sum_squares_task

from perfgym.errors import TaskFormatError
from perfgym.judge import Candidate, Judge, JudgeConfig
from perfgym.judge.verdict import Stage
from perfgym.rewards import get_reward
from perfgym.sandbox import Limits, Status
from perfgym.sandbox.cgroups import cpuset_parent
from perfgym.sandbox.pyworker import PythonWorker
from perfgym.sandbox.worker_messages import call_request, call_result
from perfgym.tasks import load_suite, materialize_all
from perfgym.tasks.task import Language, Oracle, Solution, Task, TaskKind, TestCase


@pytest.fixture(scope="module")
def worker():
    w = PythonWorker()
    yield w
    w.close()


# -- the function call's result channel is still the candidate's, and the host trusts its shape -----
# A function call's child holds the result memfd (by design: "it carries only what the program
# says it returned"). But the host decodes whatever JSON is there with no guard: a tag with a
# bad payload raises ValueError/TypeError in `valuecodec.decode`, a non-string error or a
# non-dict result AttributeError, a non-number reported_call_ns TypeError, all in the judge's
# process. The exception leaves `Judge.judge_many`: every verdict of the batch is lost (local
# judge, CLI, trainers). The service fails the whole lease ("judge failed"), re-queues every item
# and retries each alone: the others come back OK later, the forger ends infra_error after its
# last try, reward None instead of its NR penalty.
FORGED_RESULTS = {
    "bad_hex_int": {"ok": True, "value": {"int": "zz"}},
    "bad_float": {"ok": True, "value": {"float": "not-hex"}},
    "unhashable_set": {"ok": True, "value": {"set": [[1, 2]]}},
    "error_not_text": {"ok": False, "error": 5},
    "result_not_a_dict": [1, 2, 3],
    "timer_not_a_number": {"ok": True, "value": 1, "reported_call_ns": "soon"},
    "own_timer_negative": {
        "ok": True,
        "value": 1,
        "reported_call_own_ns": -5,
        "reported_call_cpu_ns": [1],
    },
}


def _forger(result: object) -> str:
    return f"""
import json, os
def f(*args):
    data = json.dumps({result!r}).encode()
    for fd in range(3, 256):
        try:
            os.pwrite(fd, data, 0)
        except OSError:
            pass
    os._exit(0)
"""


@pytest.mark.parametrize("name", sorted(FORGED_RESULTS))
def test_a_forged_result_is_the_candidates_failure_not_an_exception(worker, name):
    r = worker.call(_forger(FORGED_RESULTS[name]), "f", [1])
    if name == "timer_not_a_number":
        # The value is one the program could have returned; its self-reported time, untrusted
        # anyway, is dropped rather than believed.
        assert r.status is Status.OK and r.reported_call_s is None, (r.status, r.error)
        return
    if name == "own_timer_negative":  # the same for the call's own and CPU times
        assert r.status is Status.OK, (r.status, r.error)
        assert (r.reported_call_own_s, r.reported_call_cpu_s) == (None, None), r
        return
    assert r.status is Status.RUNTIME_ERROR, (r.status, r.error)


# A deeper forgery: JSON nested past the worker's recursion limit makes the worker server's
# json.loads raise RecursionError (not ValueError): the reply is SANDBOX_ERROR, so a wrong
# program is an infrastructure error (reward None, retried) instead of NR.
DEEP_RESULT = """
import os
def f(*args):
    data = b'{"ok": true, "value": ' + b'[' * 100000 + b']' * 100000 + b'}'
    for fd in range(3, 256):
        try:
            os.pwrite(fd, data, 0)
        except OSError:
            pass
    os._exit(0)
"""


def test_a_deeply_nested_forged_result_is_not_an_infrastructure_error(worker):
    r = worker.call(DEEP_RESULT, "f", [1])
    assert r.status is Status.RUNTIME_ERROR, (r.status, r.error)


def _sum_task() -> Task:
    baseline = "def f(n):\n    return sum(i * i for i in range(n))\n"
    return sum_squares_task("py-fn-sum-squares-rt", baseline, [200_000])


def test_a_forged_result_does_not_lose_the_batch():
    task = _sum_task()
    assert task.baseline is not None
    forger = _forger(FORGED_RESULTS["bad_hex_int"])
    with Judge(JudgeConfig(repeats=1, noise_rounds=0, drift=None)) as judge:
        verdicts = judge.judge_many(
            [Candidate(task, source=task.baseline.source, sample=0),
             Candidate(task, source=forger, sample=1)]
        )  # fmt: skip
    honest, forged = verdicts
    assert honest.stage is Stage.OK, honest.reason
    assert forged.stage in (Stage.NR, Stage.WO) and not forged.infra_error, forged.reason


# -- a call reads the previous call's reply ---------------------------------------------------------
# Every call's child is forked from inside the worker's serve loop, so its stack still holds the
# server's frames: `main()`'s local `reply` is the reply the worker sent for the PREVIOUS call
# (its return value, its stdout). `_forget` clears the compile cache and the checker, not that.
PEEK = """
import sys as _sys
def _previous_reply():
    f = _sys._getframe()
    while f is not None:
        loc = f.f_locals
        if "modes" in loc and "reply" in loc:
            return loc["reply"]
        f = f.f_back
    return None
"""


def test_a_call_cannot_read_the_previous_calls_reply(worker):
    secret = "def solve(x):\n    print('REF-STDOUT-77')\n    return 'REFERENCE-ANSWER-5e1f'\n"
    assert worker.call(secret, "solve", [1]).value == "REFERENCE-ANSWER-5e1f"
    thief = PEEK + "def f():\n    return repr(_previous_reply())\n"
    r = worker.call(thief, "f")
    assert r.status is Status.OK, r.error
    assert "REFERENCE-ANSWER-5e1f" not in r.value and "REF-STDOUT-77" not in r.value, r.value


def test_a_program_cannot_read_the_previous_programs_output(worker):
    assert worker.run_program("print('OTHER-CANDIDATES-OUTPUT-3b9')\n").status is Status.OK
    thief = PEEK + "import base64\nprint(repr(_previous_reply()))\n"
    r = worker.run_program(thief)
    assert r.status is Status.OK, r.reason
    seen = r.stdout_text
    assert "OTHER-CANDIDATES-OUTPUT" not in seen and "T1RIRVItQ0FORElEQVRFUy" not in seen, seen


# The end-to-end reward effect: a factorisation task (hard to compute, trivial to verify). The
# thief is the baseline's trial division, except that it first looks at the previous call's
# return value and returns it when its product is the argument: in the interleaved
# measurement the previous call on a worker is almost always the same workload (the reference's,
# the baseline's, its own), so the thief runs at peek speed and is never wrong.
FACTOR_BASELINE = """
def f(n):
    out = []
    d = 2
    while d * d <= n:
        while n % d == 0:
            out.append(d)
            n //= d
        d += 1
    if n > 1:
        out.append(n)
    return out
"""

FACTOR_REFERENCE = """
import math

def _is_prime(m):
    if m < 2:
        return False
    small = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)
    for p in small:
        if m % p == 0:
            return m == p
    d, s = m - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for a in small:
        x = pow(a, d, m)
        if x in (1, m - 1):
            continue
        for _ in range(s - 1):
            x = x * x % m
            if x == m - 1:
                break
        else:
            return False
    return True

def _rho(m):
    if m % 2 == 0:
        return 2
    c = 1
    while True:
        x = y = 2
        d = 1
        while d == 1:
            x = (x * x + c) % m
            y = (y * y + c) % m
            y = (y * y + c) % m
            d = math.gcd(abs(x - y), m)
        if d != m:
            return d
        c += 1

def f(n):
    out, stack = [], ([n] if n > 1 else [])
    while stack:
        m = stack.pop()
        if _is_prime(m):
            out.append(m)
            continue
        d = _rho(m)
        stack += [d, m // d]
    return sorted(out)
"""

FACTOR_THIEF = (
    PEEK
    + FACTOR_BASELINE.replace("def f(n):", "def _slow(n):")
    + """
from math import prod as _prod
def f(n):
    prev = _previous_reply()
    try:
        v = prev["result"]["value"]
        if type(v) is list and v and all(type(x) is int and x > 1 for x in v) and _prod(v) == n:
            return sorted(v)
    except Exception:
        pass
    return _slow(n)
"""
)


def _factor_task() -> Task:
    return function_task(
        "py-fn-factorise",
        "Return the prime factors of n, with multiplicity, in ascending order.",
        FACTOR_BASELINE,
        FACTOR_REFERENCE,
        [([12], [2, 2, 3]), ([97], [97]), ([1], []), ([360], [2, 2, 2, 3, 3, 5])],
        [[999983 * 1000003]],
    )


def test_a_candidate_peeking_at_the_previous_reply_scores_no_higher_than_baseline():
    task = _factor_task()
    with Judge(JudgeConfig(repeats=5, drift=None)) as judge:
        honest, thief = judge.judge_many(
            [
                Candidate(task, source=FACTOR_BASELINE, sample=0),
                Candidate(task, source=FACTOR_THIEF, sample=1),
            ]
        )
    assert honest.stage is Stage.OK and thief.stage is Stage.OK, (honest.reason, thief.reason)
    r_honest, r_thief = get_reward("rlpf", on_missing_timing="floor")([honest, thief])
    print(f"rlpf: baseline-as-candidate {r_honest}, thief (baseline + peek) {r_thief}")
    # A baseline-speed program earns the floor (0.15) plus at most a coin-flip FBR and noise.
    assert r_thief is not None and r_thief < 0.6, (r_honest, r_thief)


# -- function-task calls are not pinned, and nothing checks CPU against wall ------------------------
# In timing mode a sandboxed run is pinned and joins a cpuset of its core; a function task's
# measured calls go to the warm workers, which take no core: a call may run on every core (a
# second process or thread there also slows the variant measured on the other lane), and the
# worker never checks CPU against wall x cores.
PARALLEL = """
import os
def work(n):
    return sum(i * i for i in range(n))
def f(n):
    pids = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            work(n)
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)
    return 1
"""


@pytest.mark.alone
def test_a_function_call_using_two_cores_is_flagged(worker):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two cores")
    r = worker.call(PARALLEL, "f", [3_000_000], limits=Limits(wall_s=60))
    assert r.status is Status.OK, r.error
    print(f"cpu {r.cpu_s:.3f} s, wall {r.wall_s:.3f} s, flags {r.flags}")
    if r.cpu_s <= 1.2 * r.wall_s:
        pytest.skip("the machine was too busy for the two processes to overlap")
    assert "cpu_over_wall" in r.flags, (r.cpu_s, r.wall_s, r.flags)


# The candidate answers right everywhere except in a call that may use more than one core with
# a big argument: the correctness tests (small arguments) pass either way, a measured workload
# call fails its output check exactly when the measured call was not confined to one core.
AFFINITY_PROBE = (
    FACTOR_BASELINE.replace("def f(n):", "def _f(n):")
    + """
import os
def f(n):
    if n > 10**6 and len(os.sched_getaffinity(0)) > 1:
        return [-1]
    return _f(n)
"""
)


def test_measured_function_calls_are_confined_to_one_core():
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two cores")
    task = _factor_task()
    with Judge(JudgeConfig(repeats=1, drift=None, measure_baseline=False,
                           measure_reference=False)) as judge:  # fmt: skip
        (v,) = judge.judge_many([Candidate(task, source=AFFINITY_PROBE)])
    assert v.stage is Stage.OK, (v.stage, v.reason)


# -- CPU hidden below the worker's tolerance is dropped, not counted --------------------------------
# The worker adds the cgroup's excess over the rusage to cpu_s only when it exceeds 2 ms + 5 %;
# below that the excess is discarded (the sandbox path takes the larger figure instead).
SMALL_HIDER = """
import os, signal
def work(n):
    return sum(i * i for i in range(n))
def f(n, hidden):
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    r, w = os.pipe()
    if os.fork() == 0:
        work(hidden)
        os.write(w, b"x")
        os._exit(0)
    os.close(w)
    work(n)
    os.read(r, 1)
    return 1
"""


def test_cpu_hidden_under_the_tolerance_is_still_counted(worker):
    limits = Limits(wall_s=60)
    # ~0.8 s in the main process, ~3 % of that in an auto-reaped child: over 10 ms, under 5 %.
    req = call_request(SMALL_HIDER, "f", [20_000_000, 700_000], limits)
    raw = worker._request(req)
    r = call_result(raw, limits, worker.cgroup_unavailable)
    assert r.status is Status.OK, r.error
    if raw.get("cpu_cgroup_s") is None:
        pytest.skip("the worker has no cgroup CPU counter here")
    seen = float(raw["cpu_cgroup_s"])
    rusage = float(raw["cpu_user_s"]) + float(raw["cpu_system_s"])
    print(f"cpu_s {r.cpu_s:.4f}, rusage {rusage:.4f}, cgroup {seen:.4f}, flags {r.flags}")
    if seen - rusage < 0.01:
        pytest.skip("the child did not hide enough CPU to show the hole")
    assert r.cpu_s >= seen - 0.005 or "hidden_cpu" in r.flags, (r.cpu_s, seen, r.flags)


# -- the parent's freed heap: earlier requests' sources and test code -------------------------------
# These were open holes: the worker's forking parent decoded every request and kept a compile
# cache (every cached source: references, other candidates, the task's test code), freed in the
# child by `_forget`, not overwritten, so a call read them back with ctypes.string_at over its
# own writable mappings, defeating §3 ("cannot read the test code") and §4 (the reference).
# Now the parent never reads a request: a fresh request process per call does, and an
# assertion call's test code is read only after its candidate's process was forked
# (tests/security/test_worker_secrets.py attacks the rest of that class).
SCAN = """
import ctypes

def _scan(needle, width):
    hits = []
    with open("/proc/self/maps") as fh:
        lines = fh.read().splitlines()
    for line in lines:
        parts = line.split()
        if not parts[1].startswith("rw"):
            continue
        name = parts[5] if len(parts) > 5 else ""
        if name.startswith("[") and name not in ("[heap]", "[stack]"):
            continue
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        try:
            data = ctypes.string_at(lo, hi - lo)
        except Exception:
            continue
        i = data.find(needle)
        while i >= 0:
            hits.append(data[i + len(needle) : i + len(needle) + width])
            i = data.find(needle, i + 1)
    return hits
"""


def test_candidate_cannot_read_the_test_code_from_freed_memory():
    # A fresh worker: what its heap holds depends on every call it served before.
    worker = PythonWorker()
    try:
        _read_test_code(worker)
    finally:
        worker.close()


def _read_test_code(worker: PythonWorker) -> None:
    checker = "def check(candidate):\n    assert candidate() == 'SECRET-EXPECTED-7f3a'\n"
    honest = "def f():\n    return 'SECRET-EXPECTED-7f3a'\n"
    assert worker.check_call(honest, checker, "f").status is Status.OK  # caches the test code
    thief = SCAN + (
        "NEEDLE = ('SECRET-' + 'EXPECTED-').encode()\n"
        "def f():\n"
        "    for tail in _scan(NEEDLE, 4):\n"
        "        t = tail.decode('latin-1')\n"
        "        if len(t) == 4 and all(c in '0123456789abcdef' for c in t):\n"
        "            return NEEDLE.decode() + t\n"
        "    return 'nothing'\n"
    )
    r = worker.check_call(thief, checker, "f")
    assert r.status is Status.RUNTIME_ERROR, "a candidate that knows nothing passed the check"


def test_reference_source_cannot_be_read_from_freed_memory():
    worker = PythonWorker()
    try:
        _read_reference(worker)
    finally:
        worker.close()


def _read_reference(worker: PythonWorker) -> None:
    # A reference of a realistic size (over obmalloc's 512 bytes: its cache key is malloc'd, and
    # glibc's free leaves all but the chunk's first 16 bytes as they were).
    reference = FACTOR_REFERENCE + "# REFERENCE-ONLY-c0de\n"
    assert worker.call(reference, "f", [12]).value == [2, 2, 3]
    for _ in range(3):  # other calls in between
        assert worker.call("def g():\n    return 1\n", "g").value == 1
    thief = SCAN + (
        "def solve(x):\n"
        "    needle = ('REFERENCE-' + 'ONLY-').encode()\n"
        "    return [t.decode('latin-1') for t in _scan(needle, 4) if t == b'c0de'][:1]\n"
    )
    r = worker.call(thief, "solve", [1])
    assert r.status is Status.OK and r.value == [], (r.status, r.value, r.error)


# End to end on HumanEval/0: a program with no algorithm at all, only a lookup table parsed
# from the test code it finds in its freed heap, passes the assertion oracle once the worker has
# judged that task before (every GRPO group after the first, every measured round).
HUMANEVAL0_THIEF = (
    SCAN
    + """
_NEEDLE = ("def check" + "(candidate):").encode()
_BLOBS = _scan(_NEEDLE, 100000)  # first, before any import reuses the freed memory

import ast, json, re

def _parse(blobs):
    table = {}
    for blob in blobs:
        body = blob.split(b"\\x00", 1)[0].decode("utf-8", "replace")
        try:
            if body.startswith("\\\\n"):  # a copy of the request's JSON: unescape it
                body = json.loads(re.match(r'((?:[^"\\\\]|\\\\.)*)', body)[1].join('""'))
            tree = ast.parse(_NEEDLE.decode() + body)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare):
                call, (op,), (want,) = node.test.left, node.test.ops, node.test.comparators
                if isinstance(call, ast.Call) and isinstance(op, ast.Eq):
                    try:
                        args = tuple(ast.literal_eval(a) for a in call.args)
                        table[repr(args)] = ast.literal_eval(want)
                    except ValueError:
                        pass
    return table

_TABLE = _parse(_BLOBS)

def has_close_elements(numbers, threshold):
    return _TABLE.get(repr((numbers, threshold)))
"""
)


def test_a_lookup_table_from_freed_test_code_does_not_pass_humaneval():
    # The worker-level sequence the judge makes (the task judged once, then the thief), in a
    # fresh worker so the heap's history is fixed. Through the real judge (repeats=3, the
    # honest baseline judged first) the thief was OK in 2 of 3 runs here: an assertion-oracle
    # verdict for a program that holds no solution.
    task = load_suite("humaneval").get("HumanEval/0")
    assert task.baseline is not None and task.oracle.checker and task.entry_point
    worker = PythonWorker()
    try:
        honest = worker.check_call(task.baseline.source, task.oracle.checker, task.entry_point)
        assert honest.status is Status.OK, honest.error
        thief = worker.check_call(HUMANEVAL0_THIEF, task.oracle.checker, task.entry_point)
    finally:
        worker.close()
    assert thief.status is Status.RUNTIME_ERROR, "a lookup table passed the assertion oracle"


# -- a task's generator reads another task's generated inputs ---------------------------------------
# Generators of every task (every client's inline tasks too) share this process's generation
# workers: a generator reads the previous generation call's reply (another task's inputs, as
# JSON) and hands it back to its own client in its error message.
def _generated_task(task_id: str, generator: str) -> Task:
    return Task(
        id=task_id, family="gen", language=Language.PYTHON, kind=TaskKind.FUNCTION,
        entry_point="f", baseline=Solution(label="baseline", source="def f(xs):\n    return 1\n"),
        tests=[TestCase(id="lit", args=[[1]], expected=1)],
        workloads=[TestCase(id="w1", size=4, seed=1)], generator=generator,
    )  # fmt: skip


def test_a_generator_cannot_read_another_tasks_generated_inputs():
    victim = _generated_task(
        "client-b-task", "def generate(size, seed):\n    return [[31337, 'B-PRIVATE-INPUT']]\n"
    )
    attacker = _generated_task(
        "client-a-task",
        PEEK + "def generate(size, seed):\n    raise RuntimeError(repr(_previous_reply())[:400])\n",
    )
    seen = []
    for _ in range(3):  # the generation pool has up to two workers: one of them served B
        materialize_all(victim, victim.workloads)  # cached after the first: no call
        with pytest.raises(TaskFormatError) as err:
            materialize_all(attacker, attacker.workloads)
        seen.append(str(err.value))
    assert not any("B-PRIVATE-INPUT" in s for s in seen), seen


# -- deeply nested JSON anywhere the judge parses text --------------------------------------------
# `json.loads` raises RecursionError (not JSONDecodeError) on JSON nested past the recursion
# limit. Two places catch only JSONDecodeError: RLPF's answer format in extraction (a 10 kB
# completion), and the harness result line of a PerfCodeBench program (printed at exit, so it
# is the last line). Either exception leaves `Judge.judge_many` and the batch is lost.
def test_a_nested_json_completion_is_nx_and_the_batch_is_judged():
    task = load_suite("perfgym-core").get("py-substring-count")
    assert task.baseline is not None
    honest = "```python\n" + task.baseline.source + "```\n"
    with Judge(JudgeConfig(repeats=1, drift=None, measure_baseline=False,
                           measure_reference=False)) as judge:  # fmt: skip
        ok, bomb = judge.judge_many(
            [Candidate(task, completion=honest, sample=0),
             Candidate(task, completion='{"a":' * 2000, sample=1)]
        )  # fmt: skip
    assert ok.stage is Stage.OK and bomb.stage is Stage.NX, (ok.reason, bomb.reason)


PCB = Path(__file__).resolve().parents[1] / "fixtures" / "perfcodebench" / "executable_tasks"


def test_a_nested_json_harness_line_does_not_lose_the_batch():
    task = load_suite(PCB).get("py_range_sums")
    assert task.baseline is not None
    bomb = task.baseline.source + (
        "\nimport atexit\natexit.register(lambda: print('{\"a\":' * 5000))\n"
    )
    with Judge(JudgeConfig(repeats=1, drift=None, measure_baseline=False,
                           measure_reference=False)) as judge:  # fmt: skip
        ok, bad = judge.judge_many(
            [Candidate(task, source=task.baseline.source, sample=0),
             Candidate(task, source=bomb, sample=1)]
        )  # fmt: skip
    assert ok.stage is Stage.OK and not bad.infra_error, (ok.reason, bad.reason)


# -- a run knows it is measured; in deterministic mode nothing checks what it printed -------------
# A pinned (measured) run joins the shared cpuset `perfgym/core-N`, which /proc/self/cgroup names;
# correctness runs are not pinned ("cpuset:/"). Measured runs' outputs are checked under the cpu
# and wall clocks (the guard below), but with clock="instructions" the workloads are checked in a
# separate unpinned run first and the counted Valgrind runs are not checked at all: a program
# that prints anything when measured counts only the interpreter's start-up.
SLOW_SUM = (
    "import sys\nd = sys.stdin.read().split()\nt = 0\nfor x in d[1:]:\n    t += int(x)\nprint(t)\n"
)
FAST_SUM = "import sys\nd = sys.stdin.read().split()\nprint(sum(map(int, d[1:])))\n"
WHEN_MEASURED_PRINT_0 = (
    "import sys\n"
    "if 'perfgym/core-' in open('/proc/self/cgroup').read():\n"
    "    print(0)\n"
    "    sys.exit(0)\n" + SLOW_SUM
)


def _stdio_sum_task(task_id: str) -> Task:
    big = "20000\n" + " ".join(str(i) for i in range(20000)) + "\n"
    return Task(
        id=task_id, family="parsing", language=Language.PYTHON, kind=TaskKind.STDIO,
        goal="Print the sum of n integers.",
        baseline=Solution(label="baseline", source=SLOW_SUM),
        references=[Solution(label="reference", source=FAST_SUM)],
        tests=[TestCase(id="t1", stdin="3\n1 2 3\n", expected="6")],
        workloads=[TestCase(id="w1", stdin=big)], oracle=Oracle(kind="tokens"),
    )  # fmt: skip


def test_a_program_that_cheats_only_when_measured_gains_nothing_in_deterministic_mode():
    from perfgym.timing import instructions  # noqa: PLC0415

    if instructions.backend()[0] is None:
        pytest.skip("no instruction counting here")
    if cpuset_parent() is None:
        pytest.skip("no cpuset here: the measured runs cannot be told apart this way")
    task = _stdio_sum_task("sum-instructions-rt")
    with Judge(JudgeConfig(clock="instructions", repeats=1, drift=None)) as judge:
        honest, cheat = judge.judge_many(
            [Candidate(task, source=SLOW_SUM, sample=0),
             Candidate(task, source=WHEN_MEASURED_PRINT_0, sample=1)]
        )  # fmt: skip
    r_honest, r_cheat = get_reward("rlpf", on_missing_timing="floor")([honest, cheat])
    print(f"stages {honest.stage} {cheat.stage}; rlpf {r_honest} vs {r_cheat}")
    assert cheat.stage is not Stage.OK or r_cheat < 0.6, (cheat.stage, r_honest, r_cheat)


def test_a_program_that_cheats_only_when_measured_fails_its_measured_check():
    """Guard: under the default cpu clock a measured run's output is checked, so knowing that a
    run is measured (its cpuset) buys nothing."""
    if cpuset_parent() is None:
        pytest.skip("no cpuset here: the measured runs cannot be told apart this way")
    task = _stdio_sum_task("sum-cpu-rt")
    with Judge(JudgeConfig(repeats=1, noise_rounds=0, drift=None)) as judge:
        (cheat,) = judge.judge_many([Candidate(task, source=WHEN_MEASURED_PRINT_0)])
    assert cheat.stage in (Stage.WO, Stage.NR), (cheat.stage, cheat.reason)


# -- ENAMEL's protocol trusts the call's own timer --------------------------------------------------
# The call child times the entry point with `time.perf_counter_ns`, the very module object the
# program imports: one assignment makes every call report 0 ns, which `call_time` accepted (it
# only refuses a time below 0 or above the wall). The program could also write any
# reported_call_ns into the result memfd it holds. eff@k then sees an instant sample.
def test_a_patched_call_timer_is_not_believed(worker):
    from perfgym.enamel.timer import call_time  # noqa: PLC0415

    src = (
        "import time\n"
        "time.perf_counter_ns = lambda: 0\n"
        "def f(n):\n"
        "    return sum(i * i for i in range(n))\n"
    )
    r = worker.call(src, "f", [3_000_000], limits=Limits(wall_s=60))
    assert r.status is Status.OK, r.error
    flags: list[str] = []
    t = call_time(r, flags)
    assert t >= 0.1 * r.cpu_s or "call_timer_mismatch" in flags, (t, r.cpu_s, r.wall_s, flags)
