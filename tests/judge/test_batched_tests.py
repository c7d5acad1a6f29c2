"""A function task's correctness tests in batches (one sandboxed process per candidate, or per
test with isolate_tests): each test its own verdict and limit, a crash or timeout that test's
alone, fresh state between candidates, and no test a candidate did not answer counted passed."""

from __future__ import annotations

import textwrap

import pytest

from perfgym.judge import Candidate, Judge, JudgeConfig, Stage
from perfgym.judge.plan import task_key
from perfgym.sandbox.execution import Status
from perfgym.tasks.task import Language, Oracle, Solution, Split, Task, TaskKind, TestCase
from perfgym.tasks.timed import NOT_TIMED

SQUARE = "def f(x):\n    return x * x\n"
N_TESTS = 40


def square_task(tag: str, n: int = N_TESTS, **meta: object) -> Task:
    """f(x) = x*x on x = 0..n-1, expected outputs from the reference, nothing timed."""
    return Task(id=f"square-{tag}", family="square", language=Language.PYTHON,
                kind=TaskKind.FUNCTION, entry_point="f", split=Split.TEST,
                baseline=Solution(label="baseline", source=SQUARE),
                references=[Solution(label="reference", source=SQUARE)],
                tests=[TestCase(id=f"t{i}", args=[i]) for i in range(n)],
                oracle=Oracle(kind="exact"), metadata={NOT_TIMED: True, **meta})  # fmt: skip


@pytest.fixture(scope="module")
def judge():
    with Judge(JudgeConfig(repeats=1)) as j:
        yield j


@pytest.fixture(scope="module")
def thorough():
    with Judge(JudgeConfig(repeats=1, fail_fast=False)) as j:
        yield j


def passed(v) -> list[str]:
    return [t.id for t in v.tests if t.passed]


def test_correct_candidate_passes_every_test_in_one_batch_and_is_not_timed(judge):
    task = square_task("ok")
    (v,) = judge.judge_many([Candidate(task, source=SQUARE + "# mine\n", model="m")])
    assert v.stage is Stage.OK, v.reason
    assert len(passed(v)) == N_TESTS
    assert NOT_TIMED in v.flags and v.candidate is None and v.baseline is None
    # baseline and reference are one program: run once (no baseline run of its own)
    runs, key = judge._expected._runs, task_key(task)  # kept by the task's id and content
    assert not [k for k in runs if k[0] == key and k[1] == "baseline"]
    assert len([k for k in runs if k[0] == key and k[1] == "reference"]) == N_TESTS


# Each one answers test t0 right, then ends its process on the next test in its own way.
ENDINGS = {
    "os._exit": "import os\nos._exit(0)",
    "sys.exit": "import sys\nsys.exit(0)",
    "kill parent": "import os, signal\ntry:\n    os.kill(os.getppid(), signal.SIGKILL)\n"
    "except OSError:\n    pass\nos._exit(0)",
    "forged verdicts": "import os, json\nforged = json.dumps({'results': [{'status': 'OK', "
    "'value': {'int': 1}}] * 99, 'ok': True, 'passed': True}).encode()\n"
    "frame = len(forged).to_bytes(4, 'big') + forged\nprint(forged.decode(), flush=True)\n"
    "for fd in range(3, 64):\n    try:\n        os.write(fd, b'PASSED ' + frame)\n"
    "    except OSError:\n        pass\nos._exit(0)",
}


@pytest.mark.parametrize("how", sorted(ENDINGS))
def test_ending_the_batch_gets_no_test_it_did_not_answer(judge, thorough, how):
    """Can a cheaper program score higher? One that passes t0 and then ends its process (or
    writes forged verdicts everywhere it can): under fail_fast it fails at t1 with only t0
    passed; with every test run, a process that ended resumes in a fresh one, so it never
    passes a test it did not answer correctly."""
    body = textwrap.indent(ENDINGS[how], " " * 8)
    src = f"CALLS = []\ndef f(x):\n    CALLS.append(x)\n    if len(CALLS) > 1:\n{body}\n" \
          "    return x * x\n"  # fmt: skip
    task = square_task(f"end-{how.replace(' ', '-')}", n=6)
    (v,) = judge.judge_many([Candidate(task, source=src, model="cheat")])
    assert v.stage in (Stage.NR, Stage.WO), v.reason
    assert passed(v) == ["t0"], [(t.id, t.passed, t.message) for t in v.tests]
    (w,) = thorough.judge_many([Candidate(task, source=src, model="cheat")])
    assert w.stage in (Stage.NR, Stage.WO)
    # a process that ended: the batch resumes in a fresh one, where the next test is a first
    # call again; SystemExit is an exception (the test's verdict) and the process goes on
    want = ["t0"] if how == "sys.exit" else ["t0", "t2", "t4"]
    assert passed(w) == want, [(t.id, t.passed, t.message) for t in w.tests]
    assert len(w.tests) == 6


def test_a_timeout_is_that_tests_verdict_and_the_rest_run_in_a_fresh_process(thorough):
    src = "def f(x):\n    while x == 3:\n        pass\n    return x * x\n"
    (v,) = thorough.judge_many([Candidate(square_task("spin", n=8), source=src, model="m")])
    assert (v.stage, v.detail) == (Stage.NR, "TIMEOUT"), v.reason
    by_id = {t.id: t for t in v.tests}
    assert by_id["t3"].status is Status.TIMEOUT and "test limit" in by_id["t3"].message
    assert [t.id for t in v.tests if t.passed] == [f"t{i}" for i in range(8) if i != 3]


def test_state_a_candidate_changes_never_reaches_another_candidate(judge):
    """One candidate patches builtins and module state in its first test; the next candidate
    of the same task, judged in the same call, sees none of it."""
    patcher = ("import builtins, math\ndef f(x):\n    builtins.abs = lambda v: -1\n"
               "    math.sqrt = lambda v: 0\n    return x * x\n")  # fmt: skip
    honest = "import math\ndef f(x):\n    return abs(-x) * round(math.sqrt(x * x))\n"
    task = square_task("state")
    va, vb = judge.judge_many([Candidate(task, source=patcher, model="a"),
                               Candidate(task, source=honest, model="b")])  # fmt: skip
    assert va.stage is Stage.OK and vb.stage is Stage.OK, (va.reason, vb.reason)


def test_isolate_tests_runs_each_test_in_its_own_process():
    first_call_only = ("CALLS = []\ndef f(x):\n    CALLS.append(x)\n"
                       "    return x * x if len(CALLS) == 1 else -1\n")  # fmt: skip
    task = square_task("isolate", n=5)
    with Judge(JudgeConfig(repeats=1, isolate_tests=True)) as j:
        (iso,) = j.judge_many([Candidate(task, source=first_call_only, model="m")])
    assert iso.stage is Stage.OK, iso.reason
    with Judge(JudgeConfig(repeats=1)) as j:
        (shared,) = j.judge_many([Candidate(task, source=first_call_only, model="m")])
    assert (shared.stage, passed(shared)) == (Stage.WO, ["t0"])


def test_fail_fast_stops_at_the_first_wrong_answer_and_no_fail_fast_runs_every_test(judge,
                                                                                     thorough):  # fmt: skip
    wrong_on_odd = "def f(x):\n    return x * x + (x % 2)\n"
    task = square_task("wrong")
    (fast,) = judge.judge_many([Candidate(task, source=wrong_on_odd, model="m")])
    assert fast.stage is Stage.WO and fast.reason.startswith("t1:")
    assert len(fast.tests) < N_TESTS  # stopped in its first, short batch
    (full,) = thorough.judge_many([Candidate(task, source=wrong_on_odd, model="m")])
    assert full.stage is Stage.WO and full.reason.startswith("t1:")
    assert len(full.tests) == N_TESTS and len(passed(full)) == N_TESTS // 2


def test_large_outputs_cross_as_digests_and_a_wrong_one_is_still_caught(judge):
    """Outputs over the digest size are compared by the worker's SHA-256 of them; a different
    one is asked for in full and judged as any other output."""
    big = "def f(x):\n    return [x] * 50_000\n"
    task = square_task("big", n=3).model_copy(update={
        "baseline": Solution(label="baseline", source=big),
        "references": [Solution(label="reference", source=big)],
        "metadata": {NOT_TIMED: True, "checker_passes_equal": True}})  # fmt: skip
    off_by_one = "def f(x):\n    out = [x] * 50_000\n    out[-1] += x == 2\n    return out\n"
    ok, bad = judge.judge_many([Candidate(task, source=big + "# copy\n", model="a"),
                                Candidate(task, source=off_by_one, model="b")])  # fmt: skip
    assert ok.stage is Stage.OK, ok.reason
    assert bad.stage is Stage.WO and bad.reason.startswith("t2:"), bad.reason
    assert passed(bad) == ["t0", "t1"]


def test_a_module_that_fails_to_load_or_lacks_the_entry_point_fails_its_first_test(judge):
    task = square_task("load", n=4)
    va, vb = judge.judge_many([Candidate(task, source="raise ValueError('no')\n", model="a"),
                               Candidate(task, source="def g(x):\n    return x\n", model="b")])  # fmt: skip
    assert va.stage is Stage.NR and "ValueError: no" in va.reason
    assert vb.stage is Stage.NR and "entry point 'f'" in vb.reason
    assert not passed(va) and not passed(vb)


def test_large_float_outputs_cross_exactly_and_one_ulp_off_is_caught(judge):
    """Floats cross as JSON's shortest exact repr (a large list of them unwalked in Python): a
    value one ulp off in the last place of a 50,000-item answer is still a wrong answer."""
    big = "def f(x):\n    return [1, 2] + [x / 3] * 50_000\n"
    task = square_task("floats", n=3).model_copy(update={
        "baseline": Solution(label="baseline", source=big),
        "references": [Solution(label="reference", source=big)],
        "metadata": {NOT_TIMED: True, "checker_passes_equal": True}})  # fmt: skip
    ulp = ("import math\ndef f(x):\n    out = [1, 2] + [x / 3] * 50_000\n"
           "    out[-1] = math.nextafter(out[-1], 9.0) if x == 2 else out[-1]\n"
           "    return out\n")  # fmt: skip
    ok, bad = judge.judge_many([Candidate(task, source=big.replace("x / 3", "x/3"), model="a"),
                                Candidate(task, source=ulp, model="b")])  # fmt: skip
    assert ok.stage is Stage.OK, ok.reason
    assert bad.stage is Stage.WO and bad.reason.startswith("t2:"), bad.reason


FORGER = textwrap.dedent('''
    import os
    def f(x):
        """Writes a large, unparseable 'value' frame of its own into every pipe it holds, then
        answers wrongly."""
        frame = b'{"value": [' + b"7," * 40_000
        for fd in range(3, 64):
            try:
                if os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:"):
                    os.write(fd, len(frame).to_bytes(4, "big") + frame)
            except OSError:
                pass
        return [x + 1] * 50_000
''')


def test_a_forged_large_answer_is_digested_as_sent_and_fails(judge):
    """A large answer's bytes are not parsed where the child can write them; whatever a wrong
    program writes is digested, differs from the reference's, and its value is judged in full:
    never OK."""
    big = "def f(x):\n    return [x] * 50_000\n"
    task = square_task("forged", n=3).model_copy(update={
        "baseline": Solution(label="baseline", source=big),
        "references": [Solution(label="reference", source=big)],
        "metadata": {NOT_TIMED: True, "checker_passes_equal": True}})  # fmt: skip
    (v,) = judge.judge_many([Candidate(task, source=FORGER, model="forger")])
    assert v.stage is not Stage.OK, v.reason
