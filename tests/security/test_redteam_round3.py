"""Red team, round 3 (fresh eyes): CPU-time limits, ENAMEL's call timer, the audit.

Each test is an attack; a failing test is a hole that is still open. At commit time (redteam3,
load 20-30 on 2 shared cores):

  ENAMEL's call timer (HumanEval/1, T = 2.3-2.7 ms)
    test_enamel_work_in_an_unwaited_child_is_not_free              OPEN (slow 0.0 -> 1.55-1.63)
    test_enamel_a_zeroed_self_report_gains_no_more_than_noise      OPEN (reference 0.97 -> 1.61)
    test_enamel_an_honest_stdlib_import_does_not_zero_a_sample     OPEN (honest 1.02 -> 0.0)
  CPU-time limits
    test_batched_tests_count_the_cpu_of_a_tests_forked_children    OPEN (0.6 s CPU, 0.2 s limit: OK)
    test_a_task_with_a_long_time_limit_is_judged_not_refused       OPEN (ValidationError)
  the audit
    test_audit_does_not_reuse_results_of_a_suite_that_has_since_changed   OPEN (stale "does not
        score" for a suite whose checker now accepts anything)
    test_audit_results_file_cut_inside_a_utf8_character_is_not_a_traceback OPEN
    test_audit_of_a_suite_with_a_lone_surrogate_in_an_expected_output_...  OPEN
    test_audit_of_a_suite_with_an_unusable_limit_is_not_a_traceback[2]     OPEN

Run: PYTHONPATH=src python3 -m pytest -q -s tests/security/test_redteam_round3.py
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from perfgym.enamel.reference import measure_reference
from perfgym.enamel.sample import evaluate_sample
from perfgym.metrics.enamel import sample_efficiency
from perfgym.metrics.enamel_levels import EnamelProblem
from perfgym.sandbox.pyworker import PythonWorkerPool
from perfgym.tasks import load_suite

_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _d in ("audit", "cli", "judge"):
    if os.path.join(_TESTS, _d) not in sys.path:
        sys.path.insert(0, os.path.join(_TESTS, _d))
from audit_tasks import sum_task  # noqa: E402
from cli_helpers import perfgym  # noqa: E402
from test_batched_tests import square_task  # noqa: E402

from perfgym.judge import Candidate, Judge, JudgeConfig, Stage  # noqa: E402

# --------------------------------------------------------------------------------------------
# ENAMEL's call timer
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def enamel_task():
    return load_suite("enamel").get("HumanEval/1")


@pytest.fixture(scope="module")
def workers():
    with PythonWorkerPool() as pool:
        yield pool


@pytest.fixture(scope="module")
def enamel_ref(enamel_task, workers):
    return measure_reference(enamel_task, workers, repeats=2)


def _slow(task, ref) -> str:
    """The reference, made slower: 0.6 x the limit T of CPU burnt on every timed level (under
    the kill limit, over the reference's times by far). Honestly timed it scores 0."""
    burn = (
        "    if len(paren_string) > 1000:\n"
        f"        _e = time.process_time() + {0.6 * ref.limit_s}\n"
        "        while time.process_time() < _e:\n            pass\n"
    )
    src = task.reference.source.replace(
        "    paren_string = paren_string.replace(' ', '')",
        burn + "    paren_string = paren_string.replace(' ', '')",
    )
    assert src != task.reference.source
    return "import time\n" + src


#: The slow program's work moved into a forked child nobody waits for (its zombie is reaped by
#: the request process, a subreaper, after the call child exits: its CPU is not in the call
#: child's wait4 rusage, which is all `program_cpu_s` reads); the answer comes back through a
#: pipe. The self-report is zeroed through the server module's own bound clocks (module code).
FORKED_WORK = """
import os as _os, sys as _sys, json as _json
_srv = _sys.modules["__main__"]
_srv._monotonic_ns = lambda: 0
_srv._process_cpu_ns = lambda: 0
def separate_paren_groups(paren_string):
    r, w = _os.pipe()
    if _os.fork() == 0:
        _os.close(r)
        data = _json.dumps(_work(paren_string)).encode()
        while data:
            data = data[_os.write(w, data):]
        _os._exit(0)
    _os.close(w)
    chunks = []
    while True:
        c = _os.read(r, 1 << 16)
        if not c:
            break
        chunks.append(c)
    _os.close(r)
    return _json.loads(b"".join(chunks))
"""


#: How far two 2-repeat scores of one program may sit apart on a loaded machine (measured: the
#: reference 0.895 against its clock-faking twin 1.063 beside a peer benchmark at load 15). The
#: holes these tests close scored 0.6 above the reference (0.97 -> 1.61).
NOISE = 0.3


def _score(task, ref, run) -> float:
    n = len(ref.levels)
    p = EnamelProblem(task_id=task.id, reference_times_s=ref.level_times_s,
                      level_limits_s=[ref.limit_s] * n, samples=[run.sample])  # fmt: skip
    return sample_efficiency(run.sample, p)


def test_enamel_work_in_an_unwaited_child_is_not_free(enamel_task, enamel_ref, workers):
    """HOLE at commit: the slow program scores 0.0; the same work done in a forked child
    that the call never waits for, with the server's bound clocks patched, times every level
    at 0.0 s, no flag, and scores 1.63 (the reference scores 1.05): `program_cpu_s` is the call
    child's wait4 rusage, which misses a child reaped by the subreaper, and the kill limit
    (cgroup CPU) is not part of the call's time."""
    slow = _slow(enamel_task, enamel_ref)
    honest = evaluate_sample(enamel_task, enamel_ref, slow, workers, repeats=2)
    assert honest.sample.correct, honest.stopped
    honest_score = _score(enamel_task, enamel_ref, honest)
    cheat = slow.replace("def separate_paren_groups(", "def _work(") + FORKED_WORK
    run = evaluate_sample(enamel_task, enamel_ref, cheat, workers, repeats=2)
    assert run.sample.correct, run.stopped
    got = _score(enamel_task, enamel_ref, run)
    assert got <= honest_score + 0.1, (got, honest_score, run.sample.level_times_s, run.flags)


#: Module code that zeroes the call child's self-report: the server's bound clocks are module
#: globals of `__main__` (the worker server), which the program's own process can rebind.
ZERO_CLOCKS = ("\nimport sys as _s\n_m = _s.modules['__main__']\n"
               "_m._monotonic_ns = lambda: 0\n_m._process_cpu_ns = lambda: 0\n")  # fmt: skip


def test_enamel_a_zeroed_self_report_gains_no_more_than_noise(enamel_task, enamel_ref, workers):
    """HOLE at commit: the reference itself scores 0.95-0.97; the same code with the server's
    bound clocks rebound to 0 reports 0.0 s on every level, no flag, and scores 1.61. The
    outside estimate forgives the reference's gap + GAP_SLACK_S (2 ms) + memory release per
    call, which is larger than every level's whole time here (T = 2.5 ms): "a faked timer gains
    at most the slack" is all of the call on ENAMEL's sub-millisecond problems."""
    honest = evaluate_sample(enamel_task, enamel_ref, enamel_task.reference.source, workers,
                             repeats=2)  # fmt: skip
    cheat = evaluate_sample(enamel_task, enamel_ref, enamel_task.reference.source + ZERO_CLOCKS,
                            workers, repeats=2)  # fmt: skip
    assert honest.sample.correct and cheat.sample.correct, (honest.stopped, cheat.stopped)
    h, c = (_score(enamel_task, enamel_ref, r) for r in (honest, cheat))
    assert c <= h + NOISE, (c, h, cheat.sample.level_times_s, cheat.flags)


def test_enamel_an_honest_stdlib_import_does_not_zero_a_sample(enamel_task, enamel_ref, workers):
    """HOLE at commit (an honest program harmed): the reference scores 1.02; the same code
    with `import statistics` on top (unused; HumanEval solutions import statistics, fractions,
    decimal) scores 0.0, `from fractions import Fraction` 0.15, flagged call_timer_mismatch.
    The outside estimate charges the module's execution to every call (the gap allowed is the
    reference's, which imports nothing), while ENAMEL times the call alone.

    The hole charged the import to every call, every time. What remains is the outside
    count's noise on a loaded machine: one call of 32 overruled by 2.5 ms once scored an
    honest sample 0.60 against 0.89 (CI, stop 49), so the sample gets a second try, as the
    charge it tests for would zero both."""
    honest = evaluate_sample(enamel_task, enamel_ref, enamel_task.reference.source, workers,
                             repeats=2)  # fmt: skip
    h = _score(enamel_task, enamel_ref, honest)
    tries = []
    for _ in range(2):
        imported = evaluate_sample(enamel_task, enamel_ref,
                                   "import statistics\n" + enamel_task.reference.source, workers,
                                   repeats=2)  # fmt: skip
        assert honest.sample.correct and imported.sample.correct
        tries.append((_score(enamel_task, enamel_ref, imported), imported.sample.level_times_s,
                      imported.flags))  # fmt: skip
        if tries[-1][0] >= h - 0.25:
            break
    assert max(t[0] for t in tries) >= h - 0.25, (h, tries)


#: Module code that looks for the call's arguments everywhere the process can reach (every
#: container the collector tracks, every frame's locals up the stack) before the call: with
#: them it could compute the answer at import time, which the call's outside window (from the
#: child's "ready") does not count.
PEEK_AT_ARGS = """
import gc as _gc, sys as _sys
_N = "-".join(("needle", "7f3a"))  # made at run time: a folded constant is the module's own
def _holds(o):
    if o is globals():  # _N itself
        return False
    items = o.values() if isinstance(o, dict) else o if isinstance(o, (list, tuple)) else ()
    return any(type(e) is str and _N in e for e in items)
def _seen():
    for o in _gc.get_objects():
        try:
            if _holds(o):
                return True
        except Exception:
            pass
    f = _sys._getframe()
    while f is not None:
        if _holds(f.f_locals):
            return True
        f = f.f_back
    return False
SEEN = _seen()
def f(x):
    return [SEEN, x]
"""


def test_a_calls_arguments_are_out_of_reach_of_its_module_code(workers):
    """Fix round 3: the outside count of a call starts when its child says its module ran, so
    an import is not the call's. That is sound only if the module cannot compute the answer
    first: the arguments are a frame the worker reads after the child's fork and hands over
    after "ready". Module code searching the collector's objects and the frames finds none."""
    r = workers.call(PEEK_AT_ARGS, "f", ["needle-7f3a"])
    assert r.status.value == "OK", r.error
    assert r.value == [False, "needle-7f3a"], r.value


@pytest.mark.alone
def test_enamel_a_rebound_timer_default_gains_no_more_than_noise(enamel_task, enamel_ref,
                                                                 workers):  # fmt: skip
    """Fix round 3, sibling of the zeroed self-report: the call timer's clocks are bound at
    definition, not in module globals; a program that reaches them anyway (the function's
    `__defaults__`, writable) and makes them return 0 is overruled by the outside count and
    gains no more than the rebinding of module globals did."""
    cheat_src = enamel_task.reference.source + (
        "\nimport sys as _s\n_t = next(m._own_time_ns for m in list(_s.modules.values())\n"
        "          if hasattr(m, '_own_time_ns'))\n"
        "_t.__defaults__ = (tuple((lambda: 0) for _ in _t.__defaults__[0]),)\n"
    )
    # A working hole scores ~0.6 above the reference every time; one pair of 2-repeat scores
    # past NOISE (seen once in a full run) is measured again before it counts.
    for _ in range(2):
        honest = evaluate_sample(enamel_task, enamel_ref, enamel_task.reference.source, workers,
                                 repeats=2)  # fmt: skip
        cheat = evaluate_sample(enamel_task, enamel_ref, cheat_src, workers, repeats=2)
        assert honest.sample.correct and cheat.sample.correct, (honest.stopped, cheat.stopped)
        h, c = (_score(enamel_task, enamel_ref, r) for r in (honest, cheat))
        if c <= h + NOISE:
            break
    assert c <= h + NOISE, (c, h, cheat.sample.level_times_s, cheat.flags)


# --------------------------------------------------------------------------------------------
# CPU-time limits
# --------------------------------------------------------------------------------------------

#: f(x) = x*x; on x == 1 four forked children spin 0.15 s of CPU each (0.6 s in all) and are
#: waited for. In process, the same work is `SPIN_IN_PROCESS`.
FORKED_SPIN = """import os, time
def _spin(s):
    t = time.process_time()
    while time.process_time() - t < s:
        pass
def f(x):
    if x == 1:
        kids = []
        for _ in range(4):
            pid = os.fork()
            if pid == 0:
                _spin(0.15)
                os._exit(0)
            kids.append(pid)
        for pid in kids:
            os.waitpid(pid, 0)
    return x * x
"""
SPIN_IN_PROCESS = FORKED_SPIN.replace("if x == 1:", "if x == 1:\n        _spin(0.6)\n    if 0:")


@pytest.fixture(scope="module")
def low_floor_judge():
    """Tests' CPU limit 0.2 s (the floor; the reference takes microseconds), a 50x wall
    backstop so that a CPU limit is reached first whatever the machine's load."""
    with Judge(
        JudgeConfig(repeats=1, noise_rounds=0, test_time_floor_s=0.2, wall_backstop=50.0)
    ) as j:
        yield j


def test_batched_tests_count_the_cpu_of_a_tests_forked_children(low_floor_judge):
    """HOLE at commit: a function task's tests run in one batch child, and the batch reads a
    test's CPU from /proc/<child>/stat's utime+stime: the child's own threads, not its
    children (waited or not). 0.6 s of CPU in four forked children on a test whose CPU limit
    is 0.2 s: OK, every test passed (3.9 s wall, load 23 on 2 cores). Control: the same 0.6 s
    spent in the process itself is NR TIMEOUT "CPU time over 0.2 s"."""
    task = square_task("rt3-batch", n=3)
    control, forked = low_floor_judge.judge_many([
        Candidate(task, source=SPIN_IN_PROCESS, model="in-process"),
        Candidate(task, source=FORKED_SPIN, model="forked"),
    ])  # fmt: skip
    assert (control.stage, control.detail) == (Stage.NR, "TIMEOUT"), control.reason
    assert "CPU time over 0.2" in control.reason, control.reason
    assert (forked.stage, forked.detail) == (Stage.NR, "TIMEOUT"), forked.reason
    assert "CPU time over 0.2" in forked.reason, forked.reason


#: As FORKED_SPIN, the two children spread over every core the sandbox allows: on a machine
#: with idle cores the test's 0.3 s of CPU is done in ~0.15 s of wall, before the parent's
#: first reading of its CPU (at its 0.2 s limit).
PARALLEL_SPIN = FORKED_SPIN.replace("for _ in range(4):", "for _ in range(2):").replace(
    "            if pid == 0:\n",
    "            if pid == 0:\n                try:\n"
    "                    os.sched_setaffinity(0, range(os.cpu_count() or 1))\n"
    "                except OSError:\n                    pass\n",
)


def test_batched_tests_charge_cpu_that_ends_between_two_readings(low_floor_judge):
    """Fix round 3, sibling of the forked children: a test's CPU is read while it runs and once
    more when it answers; an answer whose CPU is over the test's limit is TIMEOUT even when no
    reading fell inside the test (children on several cores, done before the first reading)."""
    task = square_task("rt3-parallel", n=3)
    assert "sched_setaffinity" in PARALLEL_SPIN
    (v,) = low_floor_judge.judge_many([Candidate(task, source=PARALLEL_SPIN, model="par")])
    assert (v.stage, v.detail) == (Stage.NR, "TIMEOUT"), v.reason
    assert "CPU time over 0.2" in v.reason, v.reason


def test_a_task_with_a_long_time_limit_is_judged_not_refused():
    """HOLE at commit (new rules): a task whose time limit is 9000 s (2.5 h; the Task model
    takes it) gets a wall limit of 10 x 9000 = 90000 s, over Limits' 86400 s ceiling:
    `task_limits` raises a pydantic ValidationError out of `judge_many` for the task's
    correct reference. Before the CPU limits, its wall limit was 9000 s and it was judged.
    The backstop should be capped at the ceiling (or the task refused in one line on load)."""
    task = sum_task(hidden=False, size=50, time_limit_s=9000.0)
    with Judge(JudgeConfig(repeats=1, measure_baseline=False, measure_reference=False)) as j:
        (v,) = j.judge_many([Candidate(task, source=task.references[0].source, model="ref")])
    assert v.stage is Stage.OK, v.reason


# --------------------------------------------------------------------------------------------
# The audit
# --------------------------------------------------------------------------------------------


def _write_suite(folder, task) -> None:
    folder.mkdir(exist_ok=True)
    (folder / "tasks.jsonl").write_text(task.model_dump_json() + "\n")


def _constant_outcome(p) -> str:
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads(p.stdout)
    return doc["tasks"][0]["results"][0]["outcome"]


def test_audit_does_not_reuse_results_of_a_suite_that_has_since_changed(tmp_path):
    """HOLE at commit: a suite folder is audited (the `constant` probe does not score), then
    its task's checker is made to accept anything. The rerun, same command, reuses the first
    run's result: "does not score" for a task that now accepts `0` as every answer; with a new
    `-o` the default store alone does the same. The resume key (the header) names the suite by
    the path the user typed, never by its content."""
    suite = tmp_path / "mini"
    store = tmp_path / "store.sqlite"
    _write_suite(suite, sum_task(hidden=True, size=200))
    args = ("audit", suite, "--probes", "constant", "--repeats", "1", "--json",
            "--store", store)  # fmt: skip
    first = perfgym(*args, "-o", tmp_path / "a.jsonl")
    assert _constant_outcome(first) == "does not score"
    _write_suite(suite, sum_task(hidden=True, size=200, permissive=True))
    fresh = perfgym("audit", suite, "--probes", "constant", "--repeats", "1", "--json",
                    "--no-store", "-o", tmp_path / "fresh.jsonl")  # fmt: skip
    assert _constant_outcome(fresh) == "scores"  # control: the changed suite is gameable
    same_file = perfgym(*args, "-o", tmp_path / "a.jsonl")
    new_file = perfgym(*args, "-o", tmp_path / "b.jsonl")
    assert (_constant_outcome(same_file), _constant_outcome(new_file)) == ("scores", "scores")


def test_audit_results_file_cut_inside_a_utf8_character_is_not_a_traceback(tmp_path):
    """HOLE at commit: a results file whose last line ends inside a multi-byte character (an
    interrupt cut it: details hold '×' and task ids may be any text) makes `perfgym audit`
    die with a UnicodeDecodeError traceback (`resume._read` reads the file as strict UTF-8
    before anything else), where a line cut short is documented as audited again."""
    suite = tmp_path / "mini"
    _write_suite(suite, sum_task(hidden=True, size=200))
    out = tmp_path / "cut.jsonl"
    out.write_bytes(b'{"audit": {}}\n{"task_id": "sum-hidden", "detail": "1.2\xc3')
    p = perfgym("audit", suite, "--probes", "constant", "--repeats", "1", "-o", out,
                "--no-store")  # fmt: skip
    assert "Traceback" not in p.stderr, p.stderr[-1500:]
    assert p.returncode in (0, 2), (p.returncode, p.stderr[-1500:])


def test_audit_of_a_suite_with_a_lone_surrogate_in_an_expected_output_is_not_a_traceback(
    tmp_path,
):
    """HOLE at commit: a task file's expected output written as JSON "\\ud800x" loads (the
    suite loader takes it), and `perfgym audit --probes lookup-table` dies with a
    UnicodeEncodeError traceback in `literals.text_bytes` (surrogateescape encodes only
    U+DC80-U+DCFF): one malformed task ends the audit of the whole suite. It should be that
    probe's 'not applicable' (or an error result), the other tasks audited."""
    task = sum_task(hidden=True, size=200)
    doc = json.loads(task.model_dump_json())
    doc["tests"][0]["expected"] = "\ud800x\n"
    suite = tmp_path / "surrogate"
    suite.mkdir()
    (suite / "tasks.jsonl").write_text(json.dumps(doc) + "\n")
    p = perfgym("audit", suite, "--probes", "lookup-table", "--repeats", "1",
                "-o", tmp_path / "s.jsonl", "--no-store")  # fmt: skip
    assert "Traceback" not in p.stderr, p.stderr[-1500:]
    assert p.returncode in (0, 1, 2), (p.returncode, p.stderr[-1500:])


@pytest.mark.parametrize("bad", [{"memory_limit_mb": 1}, {"time_limit_s": 9000.0}])
def test_audit_of_a_suite_with_an_unusable_limit_is_not_a_traceback(tmp_path, bad):
    """HOLE at commit: a task file with `memory_limit_mb: 1` or `time_limit_s: 9000` loads,
    and `perfgym audit` dies with a pydantic ValidationError traceback from
    `judge.plan.task_limits` (Limits refuses memory under 4 MiB and walls over 86400 s):
    one task ends the audit of the suite, instead of its probes saying why they cannot run."""
    suite = tmp_path / "limits"
    suite.mkdir()
    doc = {**json.loads(sum_task(hidden=True, size=200).model_dump_json()), **bad}
    (suite / "tasks.jsonl").write_text(json.dumps(doc) + "\n")  # the Task model refuses it
    p = perfgym("audit", suite, "--probes", "constant", "--repeats", "1",
                "-o", tmp_path / "l.jsonl", "--no-store")  # fmt: skip
    assert "Traceback" not in p.stderr, p.stderr[-1500:]
    assert p.returncode in (0, 1, 2), (p.returncode, p.stderr[-1500:])
