"""Red team, round 4: can a failing program make its failure count as the machine's?

A run that fails because of perfgym (SANDBOX_ERROR, `infra_error`) is retried and then dropped:
its reward is None, the sample leaves the RL batch. A program that can end its own run that
way dodges its penalty. Each test is an attack through the real judge; an expected failure
(`xfail(strict=True)`) is a hole still open. Found on 4c172fc (redteam4), where all were open;
all are closed since (CLOSED below: the fix named):

  test_a_wrong_program_that_closes_its_question_pipe_is_not_dropped    CLOSED (request
      processes ignore SIGPIPE: EPIPE is the program's failure) (was NR infra, None)
  test_a_slow_program_that_breaks_its_timed_calls_is_not_dropped        CLOSED (the same) (NR infra, None;
      the same program honest: OK, rlpf 0.15)
  test_a_result_nested_past_the_hosts_recursion_limit_is_the_programs   CLOSED (the worker
      parses at most 200 levels; the host's RecursionError is the program's) (NR infra, None)
  test_a_wrong_answer_nested_near_the_recursion_limit_is_the_programs   CLOSED (the same) (NR infra, None,
      at nestings 982-984)
  test_an_unrepresentable_float_answer_does_not_drop_the_whole_batch    CLOSED (OverflowError
      is a malformed value; BatchReward rejudges one by one after any raise) (OverflowError out
      of judge_many: BatchReward scores the batch None, the correct twin too)
  test_a_huge_int_on_a_float_oracle_does_not_drop_the_whole_batch       CLOSED (`return 10**400`:
      OverflowError in the float oracle, the same)
  test_an_enamel_sample_that_kills_its_call_does_not_abort_the_evaluation CLOSED (SIGPIPE) (SandboxUnavailable
      out of evaluate_candidates: every model's evaluation lost)
  test_a_forged_harness_line_with_a_huge_time_does_not_drop_the_whole_batch[int, inf] CLOSED
      (a result line without a plausible elapsed_ns is not the harness's: WO)
      (OverflowError in runner._read_harness_line, or for an inf in measure.summarise: the
      batch None; the honest reference alone scores 1.26)
  test_a_huge_self_reported_call_time_does_not_drop_the_whole_batch     CLOSED (reported_call_ns
      10**400 in a forged result: OverflowError on the host, the same)
  test_a_harness_result_line_printed_by_the_program_is_not_believed     CLOSED (the verdict
      line counts only before the end mark a wrapper writes with the run's nonce after the
      harness's main returned: perfgym.judge.trailer) (found on the way: a program that prints
      {"ok": true} and exits was OK at rlpf 1.26)

Run: PYTHONPATH=src python3 -m pytest -q tests/security/test_redteam_round4.py
"""

from __future__ import annotations

import pytest
from attack_tasks import sum_squares_task

from perfgym.judge import Candidate, Judge, JudgeConfig, Stage
from perfgym.rewards import get_reward

FAST = "def f(n):\n    return (n - 1) * n * (2 * n - 1) // 6\n"
#: Correct and slow (a loop where the reference has a closed form): timed honestly, it scores.
SLOW = (
    "def f(n):\n    s = 0\n    for i in range(n):\n        for _ in range(8):\n"
    "            pass\n        s += i * i\n    return s\n"
)

#: Module code: the descriptors this process holds, {fd: what it is} ("pipe:[..]", "/memfd:res
#: (deleted)", ...). A function call's child holds a memfd named "res" (its result channel); a
#: test batch's child does not: the program can tell a timed call from a test.
FDS = """
import os
def _fds():
    out = {}
    for n in os.listdir("/proc/self/fd"):
        try:
            out[int(n)] = os.readlink("/proc/self/fd/" + n)
        except OSError:
            pass
    return out
def _read_ends():
    ends = []
    for n, link in _fds().items():
        if link.startswith("pipe:"):
            try:
                with open("/proc/self/fdinfo/%d" % n) as fi:
                    flags = int(fi.read().split("flags:")[1].split()[0], 8)
            except (OSError, ValueError, IndexError):
                continue
            if flags & 3 == 0:
                ends.append(n)
    return ends
TIMED = any(link.startswith("/memfd:res") for link in _fds().values())
"""

#: Close every pipe this process reads from: the worker's next write to it (a test batch's next
#: question, a timed call's "go") meets no reader. The worker's request process keeps SIGPIPE
#: at its default (pyworker_server.main), so it dies there: the host sees the connection
#: close, "worker failed", SANDBOX_ERROR.
CLOSE_READ_ENDS = "for _fd in _read_ends():\n    os.close(_fd)\n"


@pytest.fixture(scope="module")
def task():
    return sum_squares_task("redteam4", SLOW, [3000])


@pytest.fixture(scope="module")
def judge(task):
    """One judge for the module, its workers started and the task's baseline and reference
    measured once (by judging the reference's source) before any attack."""
    with Judge(JudgeConfig(repeats=1)) as j:
        (v,) = j.judge_many([Candidate(task, source=FAST, model="warm-up")])
        assert v.stage is Stage.OK, v.reason
        yield j


def _rlpf(verdicts):
    return get_reward("rlpf")(verdicts)


# Open on 4c172fc, closed since: a wrong program that closes the read end of its test batch's
# question pipe kills the worker's request process with SIGPIPE: its wrong answer becomes
# SANDBOX_ERROR (infra_error, reward None: dropped from the batch) instead of WO/NR (reward 0)
def test_a_wrong_program_that_closes_its_question_pipe_is_not_dropped(judge, task):
    wrong = FDS + CLOSE_READ_ENDS + "def f(n):\n    return 0\n"
    honest_wrong = "def f(n):\n    return 0\n"
    cheat, honest = judge.judge_many(
        [
            Candidate(task, source=wrong, model="m", sample=0),
            Candidate(task, source=honest_wrong, model="m", sample=1),
        ]
    )
    assert honest.stage is Stage.WO and not honest.infra_error, honest.reason
    r_cheat, r_honest = _rlpf([cheat, honest])
    assert r_honest is not None
    assert not cheat.infra_error, f"{cheat.stage} {cheat.detail}: {cheat.reason}"
    assert r_cheat is not None and r_cheat <= r_honest


# Open on 4c172fc, closed since: a correct but slow program passes its tests (batch mode), then,
# seeing a result memfd (a timed call), closes the go pipe: SIGPIPE kills the request process, its
# timing is SANDBOX_ERROR and its low speed reward becomes None (dropped) while its honest twin
# scores
def test_a_slow_program_that_breaks_its_timed_calls_is_not_dropped(judge, task):
    dodger = FDS + "if TIMED:\n    " + CLOSE_READ_ENDS.replace("\n    ", "\n        ") + SLOW
    honest, cheat = judge.judge_many(
        [
            Candidate(task, source=SLOW, model="m", sample=0),
            Candidate(task, source=dodger, model="m", sample=1),
        ]
    )
    assert honest.stage is Stage.OK and not honest.infra_error, honest.reason
    r_honest, r_cheat = _rlpf([honest, cheat])
    assert r_honest is not None
    assert not cheat.infra_error, f"{cheat.stage} {cheat.detail}: {cheat.reason}"
    assert r_cheat is not None and r_cheat <= r_honest


#: Nesting the worker's request process still parses (its own stack is ~10 frames deep) but the
#: host cannot once the reply wraps it twice more, from a stack as deep as a judge's: the
#: host's json.loads raises RecursionError, a RuntimeError, which `PythonWorker._request`
#: takes for a dead worker ("worker failed"): SANDBOX_ERROR.
DEPTHS = (970, 978, 985, 988)


def _deep_result(depth: int) -> str:
    return (
        FDS
        + (
            "if TIMED:\n"
            "    _res = [n for n, link in _fds().items() if link.startswith('/memfd:res')][0]\n"
            f"    os.write(_res, b'{{\"ok\": true, \"value\": ' + b'[' * {depth} + b']' * {depth}"
            " + b'}')\n"
            "    os._exit(0)\n"
        )
        + SLOW
    )


# Open on 4c172fc, closed since: a program whose timed call writes a result nested ~985 deep
# (parsed by the worker, too deep for the host's decoder at a judge's stack depth) makes the
# host's RecursionError a 'worker failed': SANDBOX_ERROR, reward None, where a malformed result is
# the program's failure
def test_a_result_nested_past_the_hosts_recursion_limit_is_the_programs(judge, task):
    cands = [Candidate(task, source=_deep_result(d), model="m", sample=k)
             for k, d in enumerate(DEPTHS)]  # fmt: skip
    verdicts = judge.judge_many(cands)
    dropped = [
        (d, v.detail, v.reason[:120])
        for d, v in zip(DEPTHS, verdicts, strict=True)
        if v.infra_error
    ]
    assert not dropped, f"nestings the host took for a dead worker: {dropped}"
    assert all(r is not None for r in _rlpf(verdicts))


def _deep_answer(depth: int) -> str:
    """A wrong program whose first test answer is nested `depth` deep."""
    return _raw_answer(b'{"value": ' + b"[" * depth + b"]" * depth + b"}")


#: Around the limits of the request process's parse of an answer (nested ~985 deep it is
#: rejected: the program's failure) and the host's parse of the reply, which wraps the answer
#: three levels deeper (~982 at the judge's depth: RecursionError, a RuntimeError, taken by
#: `PythonWorker._request` for a dead worker).
ANSWER_DEPTHS = tuple(range(976, 990))


# Open on 4c172fc, closed since: a wrong program whose test answer is nested ~982-984 deep passes
# the request process's parse, then the host's decoder raises RecursionError, taken for a dead
# worker: SANDBOX_ERROR, reward None, instead of NR/WO
def test_a_wrong_answer_nested_near_the_recursion_limit_is_the_programs(judge, task):
    cands = [Candidate(task, source=_deep_answer(d), model="m", sample=k)
             for k, d in enumerate(ANSWER_DEPTHS)]  # fmt: skip
    verdicts = judge.judge_many(cands)
    dropped = [
        (d, v.reason[:100]) for d, v in zip(ANSWER_DEPTHS, verdicts, strict=True) if v.infra_error
    ]
    assert not dropped, f"wrong answers dropped as infrastructure failures: {dropped}"
    assert all(v.stage in (Stage.NR, Stage.WO) for v in verdicts)


def _raw_answer(body: bytes) -> str:
    """A program that answers its first test with `body` as a frame of its own on the batch's
    answer pipe (its own answers then come one test late)."""
    return FDS + (
        "_sent = []\n"
        "def f(n):\n"
        "    if not _sent:\n"
        f"        body = {body!r}\n"
        "        for fd, link in _fds().items():\n"
        "            if link.startswith('pipe:') and fd not in _read_ends():\n"
        "                os.write(fd, len(body).to_bytes(4, 'big') + body)\n"
        "        _sent.append(1)\n"
        "    return 0\n"
    )


# Open on 4c172fc, closed since: a test answer tagged as a float too large to represent ({'float':
# '0x1p99999'}) makes the host's valuecodec.decode raise OverflowError, which batch_messages._case
# does not catch: judge_many raises, and BatchReward scores the whole batch None, the correct
# twin's sample too
def test_an_unrepresentable_float_answer_does_not_drop_the_whole_batch(judge, task):
    from perfgym.tasks.suite_model import Suite
    from perfgym.train.batch import BatchReward

    cheat = _raw_answer(b'{"value": {"float": "0x1p99999"}}')
    reward = BatchReward(Suite(name="redteam4", tasks=[task], source="test"), "rlpf",
                         judge_config=JudgeConfig(repeats=1), judge=judge)  # fmt: skip
    try:
        honest, bad = reward.score([(task.id, f"```python\n{FAST}```\n"),
                                    (task.id, f"```python\n{cheat}```\n")])  # fmt: skip
    finally:
        reward._runner.shutdown(wait=True)  # the judge is the module's: not closed here
    assert honest.value is not None and not honest.infra_error, honest.reason
    assert bad.value is not None and not bad.infra_error, bad.reason


# Open on 4c172fc, closed since: on a FUNCTION task judged by the float oracle, a program
# returning 10**400 makes oracle._float_equal's math.isnan raise OverflowError (int too large to
# convert to float), out of judge_many: BatchReward scores the whole batch None, the correct
# twin's sample too
def test_a_huge_int_on_a_float_oracle_does_not_drop_the_whole_batch(judge):
    from attack_tasks import function_task

    from perfgym.tasks.suite_model import Suite
    from perfgym.tasks.task import Oracle
    from perfgym.train.batch import BatchReward

    mean = "def f(n):\n    return (n - 1) / 2\n"
    task = function_task("redteam4-float", "Return the mean of 0..n-1.",
                         "def f(n):\n    return sum(range(n)) / n\n", mean,
                         [([4], 1.5), ([10], 4.5)], [[1000]])  # fmt: skip
    task = task.model_copy(update={"oracle": Oracle(kind="float", tolerance=1e-9)})
    reward = BatchReward(Suite(name="redteam4f", tasks=[task], source="test"), "rlpf",
                         judge_config=JudgeConfig(repeats=1), judge=judge)  # fmt: skip
    try:
        honest, bad = reward.score([(task.id, f"```python\n{mean}```\n"),
                                    (task.id, "```python\ndef f(n):\n    return 10 ** 400\n```\n")])  # fmt: skip
    finally:
        reward._runner.shutdown(wait=True)  # the judge is the module's: not closed here
    assert honest.value is not None and not honest.infra_error, honest.reason
    assert bad.value is not None and not bad.infra_error, bad.reason


# Open on 4c172fc, closed since: ENAMEL's evaluation raises SandboxUnavailable on a sample's
# SANDBOX_ERROR (enamel_sample.evaluate_sample): a sample that closes its go pipe in its timed
# calls (SIGPIPE, see above) aborts the whole evaluation, every model's samples with it
def test_an_enamel_sample_that_kills_its_call_does_not_abort_the_evaluation():
    from perfgym.enamel.candidates import evaluate_candidates
    from perfgym.sandbox.pyworker import PythonWorkerPool
    from perfgym.tasks import load_suite

    task = load_suite("enamel").get("HumanEval/1")
    ref = task.reference.source
    cheat = FDS + "if TIMED:\n    " + CLOSE_READ_ENDS.replace("\n    ", "\n        ") + ref
    cands = [Candidate(task, source=ref, model="honest"),
             Candidate(task, source=cheat, model="cheat")]  # fmt: skip
    with PythonWorkerPool(size=1) as pool:
        runs, _excluded = evaluate_candidates([task], cands, pool, repeats=1)
    assert [tr.correct for tr in runs["honest"].traces] == [True]
    assert [tr.correct for tr in runs["cheat"].traces] == [False]


#: Forged harness result lines (ok, elapsed_ns, the program's exit status): 10**400 fails
#: `float(ns)` in runner._read_harness_line; 1e400 (an inf, ok true) passes it and fails
#: `int(out.reported_s * 1e9)` in measure.summarise, a line a fix of the first misses.
HUGE_HARNESS_TIMES = [("false", "1" + "0" * 400, 1), ("true", "1e400", 0)]


# Open on 4c172fc, closed since: a PerfCodeBench harness task's program prints its own result line
# with an elapsed_ns of 10**400 (or 1e400) and exits before the harness does: float(ns) in
# _read_harness_line (or int(inf) in measure.summarise) raises OverflowError out of judge_many,
# and BatchReward scores the whole batch None, the correct twin's sample too
@pytest.mark.parametrize(("ok", "elapsed", "code"), HUGE_HARNESS_TIMES, ids=["int", "inf"])
def test_a_forged_harness_line_with_a_huge_time_does_not_drop_the_whole_batch(
    judge, ok, elapsed, code
):
    from pathlib import Path

    from perfgym.tasks import load_suite
    from perfgym.train.batch import BatchReward

    fixtures = Path(__file__).resolve().parents[1] / "fixtures/perfcodebench/executable_tasks"
    suite = load_suite(fixtures)
    task = suite.get("py_range_sums")
    forger = (
        "import os, sys\n"
        "def range_sums(values, queries):\n"
        f'    sys.stdout.write(\'{{"ok": {ok}, "elapsed_ns": {elapsed}}}\\n\')\n'
        "    sys.stdout.flush()\n"
        f"    os._exit({code})\n"
    )
    assert task.reference is not None
    reward = BatchReward(suite, "rlpf", judge_config=JudgeConfig(repeats=1), judge=judge)
    try:
        honest, bad = reward.score([(task.id, f"```python\n{task.reference.source}```\n"),
                                    (task.id, f"```python\n{forger}```\n")])  # fmt: skip
    finally:
        reward._runner.shutdown(wait=True)  # the judge is the module's: not closed here
    assert honest.value is not None and not honest.infra_error, honest.reason
    assert bad.value is not None and not bad.infra_error, bad.reason


# Open on 4c172fc, closed since: a correct program whose timed call writes its own result with
# reported_call_ns = 10**400 (an int, >= 0: what pyworker's result_of checks) makes
# worker_messages._to_result's reported / 1e9 raise OverflowError out of judge_many: BatchReward
# scores the whole batch None
def test_a_huge_self_reported_call_time_does_not_drop_the_whole_batch(judge, task):
    from perfgym.tasks.suite_model import Suite
    from perfgym.train.batch import BatchReward

    forger = (
        FDS
        + (
            "if TIMED:\n"
            "    _res = [n for n, link in _fds().items() if link.startswith('/memfd:res')][0]\n"
            '    os.write(_res, b\'{"ok": true, "value": 0, "reported_call_ns": 1\''
            " + b'0' * 400 + b'}')\n"
            "    os._exit(0)\n"
        )
        + SLOW
    )
    reward = BatchReward(Suite(name="redteam4t", tasks=[task], source="test"), "rlpf",
                         judge_config=JudgeConfig(repeats=1), judge=judge)  # fmt: skip
    try:
        honest, bad = reward.score([(task.id, f"```python\n{SLOW}```\n"),
                                    (task.id, f"```python\n{forger}```\n")])  # fmt: skip
    finally:
        reward._runner.shutdown(wait=True)  # the judge is the module's: not closed here
    assert honest.value is not None and not honest.infra_error, honest.reason
    assert bad.value is not None and not bad.infra_error, bad.reason


# Open on 4c172fc, closed since: (not a failure turned infra: found on the way) a harness task's
# program that only prints {'ok': true, 'elapsed_ns': 5000} and exits before the harness does
# was OK at rlpf 1.26, the reference's reward (the last JSON line of the shared stdout won). The
# line now counts only before the run's end mark (perfgym.judge.trailer); more attacks per
# language: tests/security/test_harness_end_mark.py
def test_a_harness_result_line_printed_by_the_program_is_not_believed(judge):
    from pathlib import Path

    from perfgym.tasks import load_suite
    from perfgym.tasks.timed import NOT_TIMED

    fixtures = Path(__file__).resolve().parents[1] / "fixtures/perfcodebench/executable_tasks"
    task = load_suite(fixtures).get("py_range_sums")
    # Correctness alone here (timed as well, the forger scored rlpf 1.26, the reference's).
    task = task.model_copy(update={"id": "py_range_sums-untimed",
                                   "metadata": {**task.metadata, NOT_TIMED: True}})  # fmt: skip
    forger = (
        "import os, sys\n"
        "def range_sums(values, queries):\n"
        '    sys.stdout.write(\'{"ok": true, "elapsed_ns": 5000}\\n\')\n'
        "    sys.stdout.flush()\n"
        "    os._exit(0)\n"
    )
    (v,) = judge.judge_many([Candidate(task, source=forger, model="m")])
    assert v.stage is not Stage.OK, f"a program that computes nothing is OK: {v.tests}"
