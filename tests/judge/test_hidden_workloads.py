"""Hidden workloads (`JudgeConfig.hidden_workloads`): what a program's author may have learnt
(the declared workloads, the generator on its declared seeds, the run's environment) buys
nothing; every role is measured on the same fresh inputs; caches key on the inputs; a task
that has no hidden inputs says so."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from perfgym.judge.candidate import Candidate
from perfgym.judge.config import JudgeConfig
from perfgym.judge.decided_on import DecidedOn
from perfgym.judge.hidden import is_hidden
from perfgym.judge.judge import Judge
from perfgym.judge.verdict import Stage
from perfgym.llm.prompts import repair_prompt
from perfgym.optimize.feedback import of_verdict
from perfgym.tasks.native import load_task_dir
from perfgym.tasks.task import TestCase

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "security"))
from lookup_tables import key_of, table_program  # noqa: E402

CORE = Path(__file__).resolve().parents[2] / "suites" / "perfgym-core"
CHEAP = {"repeats": 1, "noise_rounds": 0, "test_time_factor": None}
LIS = """import sys
from bisect import bisect_left
data = sys.stdin.read().split()
n = int(data[0])
tails = []
for x in map(int, data[1 : n + 1]):
    i = bisect_left(tails, x)
    if i == len(tails):
        tails.append(x)
    else:
        tails[i] = x
"""
CORRECT = LIS + "print(len(tails))\n"


@pytest.fixture(scope="module")
def lis_task():
    return load_task_dir(CORE / "py-lis-dp")


def _lis(stdin: str) -> int:
    from bisect import bisect_left

    data = stdin.split()
    tails: list[int] = []
    for x in map(int, data[1 : int(data[0]) + 1]):
        i = bisect_left(tails, x)
        tails[i : i + 1] = [x]
    return len(tails)


def _hidden_ids(v) -> set[str]:  # type: ignore[no-untyped-def]
    return {t.id for t in v.tests if is_hidden(t.id)} | set(
        (v.candidate.per_workload_s if v.candidate else {}).keys()
    )


def test_every_role_is_measured_on_the_same_fresh_inputs_and_caches_key_on_them(lis_task):
    with Judge(JudgeConfig(hidden_workloads=True, **CHEAP)) as judge:
        first = judge.judge(lis_task, source=CORRECT)
        second = judge.judge(lis_task, source=CORRECT)  # a new call: new inputs
    for v in (first, second):
        assert v.stage is Stage.OK, v.reason  # reference outputs asked for these inputs
        assert v.decided_on is DecidedOn.HIDDEN and v.hidden_workloads == 2
        ids = set(v.candidate.per_workload_s)
        assert len(ids) == 2 and all(is_hidden(i) for i in ids)
        for role in (v.baseline, v.reference):
            assert role is not None and set(role.per_workload_s) == ids
        assert "hidden_seed" not in v.config
    assert set(first.candidate.per_workload_s).isdisjoint(second.candidate.per_workload_s)


def test_a_fixed_seed_draws_the_same_inputs_in_another_judge(lis_task):
    config = JudgeConfig(hidden_workloads=True, hidden_seed=12345, measure_baseline=False,
                         measure_reference=False, **CHEAP)  # fmt: skip
    seen = []
    for _ in range(2):
        with Judge(config) as judge:
            seen.append(set(judge.judge(lis_task, source=CORRECT).candidate.per_workload_s))
    assert seen[0] == seen[1] and len(seen[0]) == 2


def test_more_inputs_per_workload_are_distinct_fresh_and_keep_the_first_draw(lis_task):
    """`hidden_per_workload`: each declared generated workload gets that many inputs, every one
    its own seed at the workload's size; the first draw is the one a single draw gives."""
    from perfgym.judge.hidden import hidden_cases

    one, _ = hidden_cases(lis_task, 777)
    four, _ = hidden_cases(lis_task, 777, per_workload=4)
    sizes = sorted(w.size for w in lis_task.workloads if w.seed is not None)
    assert len(four) == 4 * len(one) and sorted({c.size for c in four}) == sorted(set(sizes))
    assert [c.seed for c in four[: len(one)]] == [c.seed for c in one]
    assert len({c.seed for c in four}) == len(four) and len({c.id for c in four}) == len(four)
    declared = {w.seed for w in [*lis_task.workloads, *lis_task.tests]}
    assert declared.isdisjoint(c.seed for c in four)
    config = JudgeConfig(hidden_workloads=True, hidden_per_workload=3, measure_baseline=False,
                         measure_reference=False, **CHEAP)  # fmt: skip
    with Judge(config) as judge:
        v = judge.judge(lis_task, source=CORRECT)
    assert v.stage is Stage.OK and v.hidden_workloads == 3 * len(one), v.reason
    assert all(is_hidden(i) for i in v.candidate.per_workload_s)


def test_a_table_of_the_generator_on_many_seeds_at_the_declared_sizes_is_wrong(lis_task):
    """The suite's generator is public: run it on the declared seeds and hundreds more."""
    ns: dict = {}
    exec(compile(lis_task.generator, "generator", "exec"), ns)  # the suite's own (trusted) code
    table = {}
    for w in lis_task.workloads:
        for seed in [w.seed, *range(0, 200)]:
            stdin = ns["generate"](w.size, seed)
            table[key_of(stdin)] = f"{_lis(stdin)}\n"
    for t in lis_task.tests:
        table[key_of(t.stdin)] = t.expected
    with Judge(JudgeConfig(hidden_workloads=True, measure_baseline=False,
                           measure_reference=False, **CHEAP)) as judge:  # fmt: skip
        v = judge.judge(lis_task, source=table_program(lis_task, table))
    assert v.stage is Stage.WO and all(t.passed for t in v.tests if not is_hidden(t.id))
    assert is_hidden(next(t for t in v.tests if not t.passed).id)


def test_the_secret_seed_is_nowhere_a_program_can_look(lis_task):
    """A program that searches its environment, arguments, working directory, /tmp and
    /proc/self for the seed (or any derived seed) to regenerate the hidden inputs finds none."""
    seed = random.Random(7).randrange(10**12, 10**13)
    config = JudgeConfig(hidden_workloads=True, hidden_seed=seed, **CHEAP)
    from perfgym.judge.hidden import hidden_cases

    derived = [c.seed for c in hidden_cases(lis_task, seed)[0]]
    needles = [str(seed), *(str(d) for d in derived)]
    spy = f"""import os, sys
NEEDLES = [n[::-1] for n in {[n[::-1] for n in needles]!r}]  # its own source holds none
def leaked():
    texts = [repr(dict(os.environ)), repr(sys.argv), os.getcwd()]
    for path in ["/proc/self/environ", "/proc/self/cmdline"]:
        try:
            texts.append(open(path, "rb").read().decode("latin-1"))
        except OSError:
            pass
    for top in [".", "/tmp", os.path.expanduser("~")]:
        for root, _dirs, files in os.walk(top):
            for f in files[:50]:
                try:
                    texts.append(open(os.path.join(root, f), "rb").read(1 << 16).decode("latin-1"))
                except OSError:
                    pass
    return any(n in t for n in NEEDLES for t in texts)
if leaked():
    print("LEAK")
    sys.exit(0)
""" + CORRECT.replace("import sys\n", "", 1)
    # the control looks for a word of its own file in its working directory too
    control = spy.replace("def leaked", "NEEDLES.append('tcesib'[::-1])\ndef leaked", 1)
    with Judge(config) as judge:
        v, seen = judge.judge_many([Candidate(lis_task, source=spy),
                                    Candidate(lis_task, source=control)])  # fmt: skip
    assert v.stage is Stage.OK, v.reason
    assert v.decided_on is DecidedOn.HIDDEN
    assert seen.stage is Stage.WO  # the spy does find what is there to find


def test_a_hidden_failure_leaks_no_input_or_output_through_stderr_or_feedback(lis_task):
    """A program that, on a timed workload, prints its input and its answer to stderr and
    crashes: the run's message (stderr tail) stays with the judge; the feedback and the repair
    prompt say only that a hidden workload failed."""
    leaky = LIS + (
        "if n >= 1000:\n"
        "    sys.stderr.write('IN' + 'PUT ' + ' '.join(data[1:40]) + ' ANS' + 'WER '"
        " + str(len(tails)))\n"
        "    sys.exit(3)\n"
        "print(len(tails))\n"
    )
    with Judge(JudgeConfig(hidden_workloads=True, **CHEAP)) as judge:
        v = judge.judge(lis_task, source=leaky)
    assert v.stage is Stage.NR
    failed = next(t for t in v.tests if not t.passed)
    assert is_hidden(failed.id) and "INPUT" in failed.message  # the judge has it
    fb = of_verdict(v)
    prompt = repair_prompt(lis_task, leaky, stage=fb.stage, message=fb.message,
                           test_id=fb.test_id).messages  # fmt: skip
    text = fb.message + fb.test_id + repr(prompt)
    assert "INPUT" not in text and "ANSWER" not in text and failed.id not in text
    leaked_numbers = failed.message.split("INPUT ", 1)[1].split(" ANSWER", 1)[0].split()
    assert not any(f" {x} " in f" {fb.message} " for x in leaked_numbers[:10])
    assert "hidden workload" in fb.message


def test_a_task_without_a_generator_is_decided_on_visible_inputs_and_says_so(lis_task):
    ns: dict = {}
    exec(compile(lis_task.generator, "generator", "exec"), ns)
    literal = [TestCase(id=w.id, stdin=ns["generate"](w.size, w.seed)) for w in lis_task.workloads]
    task = lis_task.model_copy(update={"generator": None, "workloads": literal,
                                       "id": "py-lis-dp-literal"})  # fmt: skip
    with Judge(JudgeConfig(hidden_workloads=True, **CHEAP)) as judge:
        v = judge.judge(task, source=CORRECT)
    assert v.stage is Stage.OK
    assert v.decided_on is DecidedOn.VISIBLE and v.hidden_workloads == 0
    assert "no generator" in v.why_visible
    assert set(v.candidate.per_workload_s) == {"w1", "w2"}
    # an optimisation step accepted on it says what it was decided on
    from perfgym.optimize.config import OptimizeConfig
    from perfgym.optimize.search import TaskState, decide

    (step,) = decide(TaskState(task, OptimizeConfig(start="generate")), [v], None, [""])
    assert step.accepted and "decided on visible inputs: the task has no generator" in step.why


def test_a_generator_that_ignores_its_seed_gives_no_hidden_inputs_and_says_so(lis_task):
    """Hidden inputs equal to visible ones would be a silent fallback: reported instead."""
    fixed = "def generate(size, seed):\n    return f'{size}\\n' + ' '.join(map(str, range(size))) + '\\n'\n"
    task = lis_task.model_copy(update={"generator": fixed, "id": "py-lis-dp-fixed"})
    with Judge(JudgeConfig(hidden_workloads=True, **CHEAP)) as judge:
        v = judge.judge(task, source=CORRECT)
    assert v.decided_on is DecidedOn.VISIBLE and "visible" in v.why_visible


def test_eval_keeps_the_declared_workloads_unless_asked_for_hidden_ones(tmp_path):
    import json
    import os
    import subprocess

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    seen = {}
    # --repeats 3: cheaper than 1, which would measure the task's A/A band (docs/metrics.md)
    for flag in ([], ["--hidden"]):
        out = tmp_path / f"r{len(flag)}.jsonl"
        done = subprocess.run([sys.executable, "-m", "perfgym", "eval", "perfgym-core",
                               "--solutions", "reference", "--task", "py-lis-dp", "--no-store",
                               "--repeats", "3", "-q", "--no-report", "-o", str(out), *flag],
                              cwd=root, env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stderr
        (verdict,) = [d for d in map(json.loads, out.read_text().splitlines()) if "stage" in d]
        seen[bool(flag)] = (verdict["stage"], verdict["decided_on"], verdict["hidden_workloads"])
    assert seen == {False: ("OK", "visible", 0), True: ("OK", "hidden", 2)}
